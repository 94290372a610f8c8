"""A stand-in OpenAI-compatible chat-completions endpoint on 127.0.0.1, served from a thread by the test.

It answers each request with the reference it knows for the last user message (or "?"), records every
request, and can be told to fail: the first requests get the statuses in ``failures``; a text starting
with "!bad" gets HTTP 400 and one starting with "!overloaded" always gets HTTP 503. One starting with "!slow" is
never answered (`loopback.JsonHandler.wait_for_the_client_to_leave`: ``left_after_s`` says when the client left).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from loopback import JsonHandler, LoopbackServer


class StandIn(LoopbackServer):
    path_prefix = "/v1"

    def __init__(self, answers: dict[str, str], failures: list[int] | None = None,
                 retry_after: str | None = None) -> None:
        super().__init__(_Handler)
        self.answers = answers
        self.failures = deque(failures or [])
        self.retry_after = retry_after


class _Handler(JsonHandler):
    server: StandIn

    def do_POST(self) -> None:
        body = self.read_json()
        request = {"path": self.path, "body": body, "authorization": self.headers.get("Authorization"),
                   "left_after_s": None}
        with self.server.lock:
            self.server.requests.append(request)
            failure = self.server.failures.popleft() if self.server.failures else None
        source = body["messages"][-1]["content"]
        if self.path != "/v1/chat/completions":
            self.answer(404, {"error": {"message": f"no route {self.path}"}})
        elif failure is not None:
            self.answer(failure, {"error": {"message": f"stand-in failure {failure}"}})
        elif source.startswith("!bad"):
            self.answer(400, {"error": {"message": "bad request"}})
        elif source.startswith("!slow"):
            self.wait_for_the_client_to_leave(request)
        elif source.startswith("!overloaded"):
            self.answer(503, {"error": {"message": "overloaded"}})
        else:
            self.answer(200, {"choices": [{"message": {"role": "assistant",
                                                        "content": f" {self.server.answers.get(source, '?')}\n"}}],
                              "usage": {"prompt_tokens": sum(len(m["content"].split()) for m in body["messages"]),
                                        "completion_tokens": 7}})

    def answer(self, status: int, payload: dict[str, Any]) -> None:
        retry = self.server.retry_after if status == 429 else None
        self.reply(status, payload, {"Retry-After": retry} if retry is not None else None)
