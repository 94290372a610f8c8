"""The stand-in API this plugin's tests talk to (`stand_in`): a LibreTranslate-style ``/translate`` answered
with the sample corpus's references, on 127.0.0.1 only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from stand_in import REFERENCES, StandIn, serve


class StandInApi(StandIn):
    """A LibreTranslate-style /translate answering with the corpus reference; "!fail" gets an HTTP 400."""

    def answer(self, body: Any) -> tuple[int, Any]:
        if body["q"] == "!fail":
            return 400, {"error": "Invalid request: unsupported text"}
        return 200, {"translatedText": REFERENCES.get(body["q"], "?")}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.delenv("MT_EVAL_TRANSLATION_API_KEY", raising=False)
    with serve(StandInApi) as (port, requests):
        yield f"http://127.0.0.1:{port}/translate", requests
