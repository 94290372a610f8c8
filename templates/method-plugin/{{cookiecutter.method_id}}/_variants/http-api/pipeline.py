"""An API method: one call per sentence to an external, LibreTranslate-compatible translation API.

The address comes from the run's configuration, never from this file: ``config.params["api_url"]``,
e.g. ``"https://translate.example.org/translate"``. Each sentence is POSTed as JSON
``{"q": source, "source": ..., "target": ..., "format": "text"}`` and the answer's ``translatedText``
is the translation. Language codes are sent as the run gives them, unless
``config.params["language_codes"]`` maps them (e.g. ``{"eng": "en", "spa": "es"}``). An API key, when
the service needs one, is read from the environment variable ``MT_EVAL_TRANSLATION_API_KEY`` and sent
as ``"api_key"``.

translate.js beside this file behaves identically. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from http_json import EntryError, in_threads, post_json

API_KEY_VARIABLE = "MT_EVAL_TRANSLATION_API_KEY"


def config_problem(params: dict[str, Any]) -> str | None:
    """Why these parameters cannot run (None when they can)."""
    url = params.get("api_url")
    if url is None or url == "":
        return ('config.params["api_url"] is not set: give the translation endpoint, e.g. mt-eval run --param '
                "api_url=http://127.0.0.1:5000/translate")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return f'config.params["api_url"] {json.dumps(url, ensure_ascii=False)} is not an http:// or https:// address'
    codes = params.get("language_codes")
    if codes is not None and not (isinstance(codes, dict) and all(isinstance(v, str) for v in codes.values())):
        return 'config.params["language_codes"] must map language codes to codes, e.g. {"eng": "en"}'
    return None


class TranslationApiMethod:
    """The method: one request per entry, at most ``config.concurrency`` at a time."""

    def translate_one(self, entry: dict[str, Any], config: Any) -> dict[str, Any]:
        started = time.perf_counter()
        params = config.params
        url = params["api_url"]
        codes = params.get("language_codes") or {}
        body = {"q": entry["source"], "source": codes.get(config.source_lang, config.source_lang),
                "target": codes.get(config.target_lang, config.target_lang), "format": "text"}
        key = os.environ.get(API_KEY_VARIABLE)
        if key:
            body["api_key"] = key
        try:
            data = post_json(url, body, config.timeout_s)
            translated = data.get("translatedText")
            if not isinstance(translated, str):
                raise EntryError(f"the answer from {url} has no translatedText")
        except EntryError as exc:
            return {"id": entry["id"], "predicted": None, "error": str(exc),
                    "latency_s": time.perf_counter() - started}
        return {"id": entry["id"], "predicted": translated, "latency_s": time.perf_counter() - started}

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        problem = config_problem(config.params)
        if problem:
            return [{"id": entry["id"], "predicted": None, "error": problem} for entry in entries]
        return await in_threads(entries, config.concurrency, lambda entry: self.translate_one(entry, config))
