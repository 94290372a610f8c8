"""An LLM method: one chat-completions call per sentence to any OpenAI-compatible endpoint.

The endpoint and the model come from the run's configuration, never from this file:
``config.base_url`` (e.g. ``http://127.0.0.1:8000/v1``; ``/chat/completions`` is appended) and
``config.model``. ``temperature``, ``max_tokens`` and ``seed`` are sent when set. An API key, when
the endpoint needs one, is read from the environment variable ``MT_EVAL_LLM_API_KEY``. The system
prompt is prompt.txt, with ``{source_lang}`` and ``{target_lang}`` replaced by the run's languages.

translate.js beside this file behaves identically. Only the standard library is used.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from http_json import EntryError, in_threads, post_json

API_KEY_VARIABLE = "MT_EVAL_LLM_API_KEY"


def config_problem(config: Any) -> str | None:
    """Why this configuration cannot run (None when it can)."""
    if not config.base_url:
        return ("config.base_url is not set: give the OpenAI-compatible endpoint, e.g. mt-eval run --base-url "
                "http://127.0.0.1:8000/v1")
    if not config.base_url.startswith(("http://", "https://")):
        return f'config.base_url "{config.base_url}" is not an http:// or https:// address'
    if not config.model:
        return "config.model is not set: give the name of a model the endpoint serves, e.g. mt-eval run --model NAME"
    return None


class ChatCompletionsMethod:
    """The method: the system prompt from prompt.txt, the sentence as the user message."""

    def __init__(self, directory: str | Path) -> None:
        # (utf-8-sig: a byte-order mark an editor wrote is dropped, as translate.js's trim() drops it)
        self.prompt = (Path(directory) / "prompt.txt").read_text(encoding="utf-8-sig").strip()

    def request_body(self, source: str, config: Any) -> dict[str, Any]:
        system = self.prompt.replace("{source_lang}", config.source_lang).replace("{target_lang}", config.target_lang)
        body: dict[str, Any] = {"model": config.model, "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": source}]}
        for option in ("temperature", "max_tokens", "seed"):
            if getattr(config, option) is not None:
                body[option] = getattr(config, option)
        return body

    def translate_one(self, entry: dict[str, Any], config: Any) -> dict[str, Any]:
        started = time.perf_counter()
        url = config.base_url.rstrip("/") + "/chat/completions"
        key = os.environ.get(API_KEY_VARIABLE)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            data = post_json(url, self.request_body(entry["source"], config), config.timeout_s, headers)
            choices = data.get("choices")
            message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(
                choices[0], dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, str):
                raise EntryError(f"the answer from {url} has no choices[0].message.content")
        except EntryError as exc:
            return {"id": entry["id"], "predicted": None, "error": str(exc),
                    "latency_s": time.perf_counter() - started}
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        counts = {name: usage[name] for name in ("prompt_tokens", "completion_tokens")
                  if isinstance(usage.get(name), int) and not isinstance(usage.get(name), bool) and usage[name] >= 0}
        return {"id": entry["id"], "predicted": content.strip(), "latency_s": time.perf_counter() - started,
                "usage": counts}

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        problem = config_problem(config)
        if problem:
            return [{"id": entry["id"], "predicted": None, "error": problem} for entry in entries]
        return await in_threads(entries, config.concurrency, lambda entry: self.translate_one(entry, config))
