"""The stand-in endpoint this plugin's tests talk to (`stand_in`): chat completions answered with the sample
corpus's references, on 127.0.0.1 only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from stand_in import REFERENCES, StandIn, serve


class StandInEndpoint(StandIn):
    """Answers chat completions with the corpus reference; "!fail" gets an HTTP 503."""

    def answer(self, body: Any) -> tuple[int, Any]:
        source = body["messages"][-1]["content"]
        if source == "!fail":
            return 503, {"error": {"message": "model overloaded"}}
        return 200, {"choices": [{"message": {"role": "assistant", "content": f" {REFERENCES.get(source, '?')}\n"}}],
                     "usage": {"prompt_tokens": len(body["messages"][0]["content"].split()), "completion_tokens": 4}}


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.delenv("MT_EVAL_LLM_API_KEY", raising=False)
    with serve(StandInEndpoint) as (port, requests):
        yield f"http://127.0.0.1:{port}/v1", requests
