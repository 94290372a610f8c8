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

import asyncio
import errno
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

API_KEY_VARIABLE = "MT_EVAL_TRANSLATION_API_KEY"


class EntryError(Exception):
    """One entry failed; the message becomes its ``error``."""


def error_detail(body: str) -> str:
    """The useful part of an error response: its error message, else the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    return body.strip()[:200]


def seconds(value: float) -> str:
    """A duration as both runtimes print it (120, 0.5)."""
    return f"{value:g}"


def post_json(url: str, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """POST ``body`` as JSON and return the decoded JSON object; failures raise `EntryError`."""
    request = urllib.request.Request(url, data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            text = response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        detail = error_detail(exc.read().decode("utf-8", errors="replace"))
        raise EntryError(f"HTTP {exc.code} from {url}: {detail}") from exc
    except (OSError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise EntryError(f"no answer from {url} within {seconds(timeout_s)} s") from exc
        code = errno.errorcode.get(reason.errno or 0) if isinstance(reason, OSError) else None
        raise EntryError(f"cannot reach {url}: {code or reason}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EntryError(f"the answer from {url} is not JSON") from exc
    if not isinstance(data, dict):
        raise EntryError(f"the answer from {url} is not a JSON object")
    return data


def config_problem(params: dict[str, Any]) -> str | None:
    """Why these parameters cannot run (None when they can)."""
    url = params.get("api_url")
    if url is None or url == "":
        return ('config.params["api_url"] is not set: give the translation endpoint, e.g. '
                '"http://127.0.0.1:5000/translate"')
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
        limit = asyncio.Semaphore(config.concurrency)

        async def one(entry: dict[str, Any]) -> dict[str, Any]:
            async with limit:
                return await asyncio.to_thread(self.translate_one, entry, config)

        return list(await asyncio.gather(*(one(entry) for entry in entries)))
