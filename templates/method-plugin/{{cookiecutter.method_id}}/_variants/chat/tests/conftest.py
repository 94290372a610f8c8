"""The stand-in endpoint this plugin's tests talk to: served by the tests themselves on 127.0.0.1, so nothing
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


class StandInEndpoint(BaseHTTPRequestHandler):
    """Answers chat completions with the corpus reference; "!fail" gets an HTTP 503."""

    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
        source = body["messages"][-1]["content"]
        if source == "!fail":
            status, answer = 503, {"error": {"message": "model overloaded"}}
        else:
            status, answer = 200, {
                "choices": [{"message": {"role": "assistant", "content": f" {REFERENCES.get(source, '?')}\n"}}],
                "usage": {"prompt_tokens": len(body["messages"][0]["content"].split()), "completion_tokens": 4}}
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
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.delenv("MT_EVAL_LLM_API_KEY", raising=False)
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (StandInEndpoint,), {"requests": requests})
    server = LoopbackServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    server.shutdown()
    server.server_close()
