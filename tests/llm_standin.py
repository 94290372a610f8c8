"""A stand-in OpenAI-compatible chat-completions endpoint on 127.0.0.1, served from a thread by the test.

It answers each request with the reference it knows for the last user message (or "?"), records every
request, and can be told to fail: the first requests get the statuses in ``failures``; a text starting
with "!bad" gets HTTP 400 and one starting with "!overloaded" always gets HTTP 503.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StandIn(ThreadingHTTPServer):
    request_queue_size = 64
    daemon_threads = True

    def __init__(self, answers: dict[str, str], failures: list[int] | None = None,
                 retry_after: str | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers = answers
        self.failures = deque(failures or [])
        self.retry_after = retry_after
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(5)


class _Handler(BaseHTTPRequestHandler):
    server: StandIn

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body,
                                         "authorization": self.headers.get("Authorization")})
            failure = self.server.failures.popleft() if self.server.failures else None
        source = body["messages"][-1]["content"]
        if self.path != "/v1/chat/completions":
            self.answer(404, {"error": {"message": f"no route {self.path}"}})
        elif failure is not None:
            self.answer(failure, {"error": {"message": f"stand-in failure {failure}"}})
        elif source.startswith("!bad"):
            self.answer(400, {"error": {"message": "bad request"}})
        elif source.startswith("!overloaded"):
            self.answer(503, {"error": {"message": "overloaded"}})
        else:
            self.answer(200, {"choices": [{"message": {"role": "assistant",
                                                        "content": f" {self.server.answers.get(source, '?')}\n"}}],
                              "usage": {"prompt_tokens": sum(len(m["content"].split()) for m in body["messages"]),
                                        "completion_tokens": 7}})

    def answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429 and self.server.retry_after is not None:
            self.send_header("Retry-After", self.server.retry_after)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass
