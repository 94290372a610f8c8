"""The stand-in API this plugin's tests talk to: served by the tests themselves on 127.0.0.1, so nothing
leaves this machine."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

PLUGIN = Path(__file__).resolve().parent.parent
CORPUS = [json.loads(line) for line in (PLUGIN / "sample" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]
REFERENCES = {entry["source"]: entry["reference"] for entry in CORPUS}


class StandInApi(BaseHTTPRequestHandler):
    """A LibreTranslate-style /translate answering with the corpus reference; "!fail" gets an HTTP 400."""

    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append({"path": self.path, "body": body})
        if body["q"] == "!fail":
            status, answer = 400, {"error": "Invalid request: unsupported text"}
        else:
            status, answer = 200, {"translatedText": REFERENCES.get(body["q"], "?")}
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


class LoopbackServer(ThreadingHTTPServer):
    """A threaded HTTP server whose listen queue takes a burst of concurrent requests without delay."""

    request_queue_size = 64

@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.delenv("MT_EVAL_TRANSLATION_API_KEY", raising=False)
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (StandInApi,), {"requests": requests})
    server = LoopbackServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/translate", requests
    server.shutdown()
    server.server_close()
