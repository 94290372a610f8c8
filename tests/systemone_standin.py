"""A stand-in decision engine serving ``POST /v1/systemone`` on 127.0.0.1 from a thread, for the adapter's tests.

It answers deterministically from the state: noul gets 0.9 when the state's candidate equals its reference and
0.2 otherwise; choice puts 0.7 on the option named by ``state["prefer"]`` (else spreads evenly); score puts 0.6
on the level ``state["level"]`` (default the last) and spreads the rest evenly. It records every request with its
headers; ``failures`` lists statuses to answer the first requests with (503s carry ``Retry-After``), and a state
with ``"mode"`` misbehaves: "bad-request" → HTTP 400, "wrong-sum" → choice probabilities summing to 0.9,
"no-answers" → a response without answers, "missing-answer" → q1 left out, "wrong-type" → q1 answered as choice,
"not-json" → a body that is not JSON, "slow" → no answer at all (``left_after_s``: when the client left).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from loopback import JsonHandler, LoopbackServer


class SystemOneStandIn(LoopbackServer):
    def __init__(self, failures: list[int] | None = None) -> None:
        super().__init__(_Handler)
        self.failures = deque(failures or [])


def answer(question: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    kind = question["type"]
    if kind == "noul":
        return {"type": "noul", "noul": 0.9 if state.get("candidate") == state.get("reference") else 0.2}
    options = list(question["criteria"]) if kind == "choice" else [str(i) for i in range(len(question["criteria"]))]
    chosen = state.get("prefer") if kind == "choice" else str(state.get("level", len(options) - 1))
    if chosen in options:
        rest = 0.4 / (len(options) - 1)
        probabilities = {o: 0.6 if o == chosen else rest for o in options} if kind == "score" else \
            {o: 0.7 if o == chosen else 0.3 / (len(options) - 1) for o in options}
    else:
        probabilities = {o: 1 / len(options) for o in options}
    top = max(probabilities, key=lambda o: probabilities[o])
    if kind == "choice":
        return {"type": "choice", "choice": top, "confidence": 0.5, "probabilities": probabilities}
    return {"type": "score", "score": sum(int(o) * p for o, p in probabilities.items()), "confidence": 0.4,
            "legend": dict(zip(options, question["criteria"], strict=True)), "probabilities": probabilities}


class _Handler(JsonHandler):
    server: SystemOneStandIn

    def do_POST(self) -> None:
        body = self.read_json()
        with self.server.lock:
            request = {"path": self.path, "body": body, "headers": dict(self.headers), "left_after_s": None}
            self.server.requests.append(request)
            failure = self.server.failures.popleft() if self.server.failures else None
        if self.path != "/v1/systemone":
            return self.reply(404, {"error": {"message": f"no route {self.path}"}})
        if failure is not None:
            return self.reply(failure, {"error": {"message": f"stand-in failure {failure}"}},
                              {"Retry-After": "0"} if failure == 503 else {})
        state, questions = body["state"], body["questions"]
        mode = state.get("mode")
        if mode == "slow":
            return self.wait_for_the_client_to_leave(request)
        if mode == "bad-request":
            return self.reply(400, {"error": {"message": "questions must not be empty"}})
        if mode == "not-json":
            return self.reply(200, None, raw=b"<html>oops</html>")
        if mode == "no-answers":
            return self.reply(200, {"model": "standin-1"})
        answers = {key: answer(question, state) for key, question in questions.items()}
        if mode == "wrong-sum":
            for item in answers.values():
                if item["type"] == "choice":
                    item["probabilities"] = {o: 0.9 / len(item["probabilities"]) for o in item["probabilities"]}
        if mode == "missing-answer":
            answers.pop("q1", None)
        if mode == "wrong-type":
            answers["q1"] = {"type": "choice", "choice": "x", "probabilities": {"x": 1.0}}
        self.reply(200, {"model": "standin-1.0", "answers": answers,
                         "usage": {"input_tokens": 11 * len(questions), "output_tokens": len(questions)}})
