"""A stand-in OpenAI-compatible endpoint that answers with next-token log-probabilities, for the LLM grader.

It reads the options offered in the last user message ("X) ..." lines) and the texts ("Candidate translation
(...): ...", "Reference translation (...): ..."), and returns one token with top log-probabilities: 0.6 on the
label it prefers — the last level/"yes" when candidate and reference are equal, else the middle level/"no"; for
choices the label of the translation equal to the reference — 0.2 on another label, 0.1 spread over variants
of the labels (" 4", "Yes.") and 0.1 on junk tokens. A message containing "!lowmass" gets almost all its mass
on junk; "!nologprobs" gets no logprobs. Every request is recorded.
"""

from __future__ import annotations

import math
import re
from typing import Any

from loopback import JsonHandler, LoopbackServer


class LogprobStandIn(LoopbackServer):
    path_prefix = "/v1"

    def __init__(self) -> None:
        super().__init__(_Handler)


def _field(text: str, name: str) -> str | None:
    found = re.search(rf"^{name}[^:]*: (.*)$", text, flags=re.M)
    return found.group(1) if found else None


def top_logprobs(text: str) -> list[dict[str, Any]]:
    labels = re.findall(r"^(\w+)\) ", text, flags=re.M)
    candidate, reference = _field(text, "Candidate translation"), _field(text, "Reference translation")
    if labels[:2] == ["yes", "no"]:
        preferred, other = ("yes", "no") if candidate == reference else ("no", "yes")
    elif labels[0] == "A":
        texts = [_field(text, f"Translation {label}") for label in labels]
        preferred = next((label for label, t in zip(labels, texts, strict=False) if t == reference), labels[-1])
        other = next(label for label in labels if label != preferred)
    else:
        preferred = labels[-1] if candidate == reference else labels[len(labels) // 2]
        other = labels[0] if preferred != labels[0] else labels[1]
    if "!lowmass" in text:
        weights = {"The": 0.7, "I": 0.25, preferred: 0.05}
    else:
        weights = {preferred: 0.6, other: 0.2, f" {preferred}": 0.05, f"{preferred.title()}.": 0.05, "The": 0.06,
                   "\n": 0.04}
    return [{"token": token, "logprob": math.log(p), "bytes": list(token.encode())} for token, p in weights.items()]


class _Handler(JsonHandler):
    server: LogprobStandIn

    def do_POST(self) -> None:
        body = self.read_json()
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body,
                                         "authorization": self.headers.get("Authorization")})
        text = body["messages"][-1]["content"]
        top = top_logprobs(text)
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": top[0]["token"]},
                                  "finish_reason": "length"}
        if "!nologprobs" not in text:
            choice["logprobs"] = {"content": [{"token": top[0]["token"], "logprob": top[0]["logprob"],
                                               "top_logprobs": top}]}
        self.reply(200, {"choices": [choice], "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 1}})
