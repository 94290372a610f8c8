"""A stand-in HTTP service for this plugin's tests, served by the tests themselves on 127.0.0.1 (nothing leaves
this machine): a subclass of `StandIn` says how it answers a request; `serve` runs it and records each request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PLUGIN = Path(__file__).resolve().parent.parent
CORPUS = [json.loads(line) for line in (PLUGIN / "sample" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]
REFERENCES = {entry["source"]: entry["reference"] for entry in CORPUS}


class StandIn(BaseHTTPRequestHandler):
    """Answers each JSON POST with `answer`'s status and JSON document, recording the request."""

    requests: list[dict[str, Any]]

    def answer(self, body: Any) -> tuple[int, Any]:
        raise NotImplementedError

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
        status, answer = self.answer(body)
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


@contextmanager
def serve(stand_in: type[StandIn]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """Serve ``stand_in`` on a free port of 127.0.0.1: (the port, the requests it receives)."""
    requests: list[dict[str, Any]] = []
    server = LoopbackServer(("127.0.0.1", 0), type("Handler", (stand_in,), {"requests": requests}))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], requests
    finally:
        server.shutdown()
        server.server_close()
