"""A coached LLM: any OpenAI-compatible chat-completions endpoint, steered by a published prompt and
few-shot examples that ship with the plugin.

Nothing about the model is in this file. The run's configuration says where and what:
``config.base_url`` (e.g. ``http://127.0.0.1:8000/v1``; ``/chat/completions`` is appended) and
``config.model``; ``temperature``, ``max_tokens`` and ``seed`` are sent when set. An API key, when the
endpoint needs one, comes from the environment variable ``MT_EVAL_LLM_API_KEY``.

Each request carries the system prompt (prompt.txt, with the run's languages filled in), the few-shot
examples for the run's direction (examples.jsonl: a user turn and an assistant turn each), then the text.
Answers of HTTP 429 and 5xx, and failed connections, are retried with exponential backoff (full jitter,
honouring ``Retry-After``); other errors fail the entry at once. Every attempt of an entry, and the waits between
them, fit in its ``config.timeout_s``: an attempt waits only for what is left of it, and no retry starts once it
is spent, so the entry fails with the method's own reason before the run's deadline for it. A call that is
cancelled (the run's deadline, Ctrl-C) closes its request's connection at once and makes no further attempt.
``config.params``:

- ``max_retries`` (default 4): retries per entry after the first attempt;
- ``backoff_s`` (default 0.5): the first delay; each retry doubles it, up to ``max_backoff_s`` (default 8).

Only the standard library is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

API_KEY_VARIABLE = "MT_EVAL_LLM_API_KEY"
LANGUAGES = {"eng": "English", "spa": "Spanish"}
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class EntryError(Exception):
    """The entry failed; the message becomes its ``error``."""


@dataclass
class Attempt:
    """One HTTP exchange: the decoded answer, or why it failed and whether trying again may help."""

    data: dict[str, Any] | None = None
    error: str | None = None
    retry: bool = False
    retry_after_s: float | None = None
    timed_out: bool = False


class Exchange:
    """The connections of one request, made in a worker thread, which the event loop can cut (`abort`): the
    blocked read ends at once, so a cancelled call keeps neither its thread nor the server waiting."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.aborted = False

    def opened(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.append(sock)
            if self.aborted:
                _cut(sock)

    def abort(self) -> None:
        with self.lock:
            self.aborted = True
            for sock in self.sockets:
                _cut(sock)


def _cut(sock: socket.socket) -> None:
    """The plain socket's shutdown, under TLS too: it wakes the thread reading from it, which then fails its read."""
    with contextlib.suppress(OSError):  # (already closed)
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Connection(http.client.HTTPConnection):
    """A connection that tells its `Exchange` of its socket (``_SecureConnection``: under TLS)."""

    def __init__(self, *args: Any, exchange: Exchange, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exchange = exchange

    def connect(self) -> None:
        super().connect()
        self.exchange.opened(self.sock)


class _SecureConnection(_Connection, http.client.HTTPSConnection):
    pass


class _Handler(urllib.request.HTTPHandler):
    def __init__(self, exchange: Exchange) -> None:
        super().__init__()
        self.exchange = exchange

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Connection, req, exchange=self.exchange)


class _SecureHandler(urllib.request.HTTPSHandler):
    def __init__(self, exchange: Exchange) -> None:
        super().__init__()
        self.exchange = exchange

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_SecureConnection, req, context=self._context, exchange=self.exchange)


def error_detail(body: str) -> str:
    """The useful part of an error response: its error message, else the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return error if isinstance(error, str) else body.strip()[:200]


def retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to the backoff


def post(url: str, body: dict[str, Any], headers: dict[str, str], timeout_s: float,
         exchange: Exchange | None = None) -> Attempt:
    """One POST (blocking: run it in a worker thread), answered within ``timeout_s``; ``exchange.abort()`` ends it."""
    request = urllib.request.Request(url, data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                     headers={"Content-Type": "application/json", **headers}, method="POST")
    exchange = exchange or Exchange()
    opener = urllib.request.build_opener(_Handler(exchange), _SecureHandler(exchange))
    try:
        with opener.open(request, timeout=timeout_s) as response:
            text = response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        detail = error_detail(exc.read().decode("utf-8", errors="replace"))
        return Attempt(error=f"HTTP {exc.code} from {url}: {detail}", retry=exc.code in RETRY_STATUSES,
                       retry_after_s=retry_after(exc.headers.get("Retry-After")))
    except (OSError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
            return Attempt(error=f"no answer from {url} within {timeout_s:g} s", retry=True, timed_out=True)
        return Attempt(error=f"cannot reach {url}: {reason}", retry=True)
    try:
        data = json.loads(text)
    except ValueError:
        return Attempt(error=f"the answer from {url} is not JSON")
    if not isinstance(data, dict):
        return Attempt(error=f"the answer from {url} is not a JSON object")
    return Attempt(data=data)


def config_problem(config: Any) -> str | None:
    """Why this configuration cannot run (None when it can)."""
    if not config.base_url:
        return 'config.base_url is not set: give the OpenAI-compatible endpoint (--base-url), e.g. ' \
               '"http://127.0.0.1:8000/v1"'
    if not str(config.base_url).startswith(("http://", "https://")):
        return f'config.base_url "{config.base_url}" is not an http:// or https:// address'
    if not config.model:
        return "config.model is not set: give the name of a model the endpoint serves (--model)"
    return None


def abstention(source: str, config: Any) -> str | None:
    """Why the method declines an entry without asking the model: a pair it has no prompt for, or a source
    with no letter or digit (empty, or only symbols and control characters: a model would only invent)."""
    if (config.source_lang, config.target_lang) not in (("eng", "spa"), ("spa", "eng")):
        return f"unsupported pair {config.source_lang}>{config.target_lang}: this method translates eng>spa and spa>eng"
    if not any(character.isalnum() for character in source):
        return "the source has no letter or digit: nothing to translate"
    return None


class CoachedLLMMethod:
    """The method: prompt and examples are read once; entries are translated concurrently."""

    def __init__(self, directory: str | Path) -> None:
        directory = Path(directory)
        self.prompt = (directory / "prompt.txt").read_text(encoding="utf-8").strip()
        lines = (directory / "examples.jsonl").read_text(encoding="utf-8").splitlines()
        self.examples = [json.loads(line) for line in lines if line.strip()]

    def messages(self, source: str, config: Any) -> list[dict[str, str]]:
        system = self.prompt.replace("{source_language}", LANGUAGES[config.source_lang]).replace(
            "{target_language}", LANGUAGES[config.target_lang])
        messages = [{"role": "system", "content": system}]
        for example in self.examples:
            messages.append({"role": "user", "content": example[config.source_lang]})
            messages.append({"role": "assistant", "content": example[config.target_lang]})
        messages.append({"role": "user", "content": source})
        return messages

    def request_body(self, source: str, config: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": config.model, "messages": self.messages(source, config)}
        for option in ("temperature", "max_tokens", "seed"):
            if getattr(config, option) is not None:
                body[option] = getattr(config, option)
        return body

    async def translate_one(self, entry: dict[str, Any], config: Any) -> dict[str, Any]:
        started = time.perf_counter()
        params = config.params or {}
        retries, first, cap = (max(0, int(params.get("max_retries", 4))), float(params.get("backoff_s", 0.5)),
                               float(params.get("max_backoff_s", 8.0)))
        url = str(config.base_url).rstrip("/") + "/chat/completions"
        key = os.environ.get(API_KEY_VARIABLE)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = self.request_body(str(entry["source"]), config)
        deadline = started + config.timeout_s  # the entry's time, all its attempts included
        attempt, attempts = Attempt(), 0
        while attempts <= retries:
            if attempts:
                delay = attempt.retry_after_s
                delay = min(cap, delay if delay is not None else random.uniform(0, first * 2 ** (attempts - 1)))
                if time.perf_counter() + delay >= deadline:
                    break  # no time left for another attempt
                await asyncio.sleep(delay)
            attempt = await _attempt(url, body, headers, max(0.01, deadline - time.perf_counter()))
            attempts += 1
            if attempt.data is not None or not attempt.retry:
                break
        elapsed = time.perf_counter() - started
        metadata = {"attempts": attempts}
        try:
            if attempt.timed_out:  # (within what was left of the entry's time: said as that time)
                attempt.error = f"no answer from {url} within {config.timeout_s:g} s"
            if attempt.data is None:
                raise EntryError(attempt.error if attempts == 1 or not attempt.retry
                                 else f"{attempt.error} (after {attempts} attempts)")
            content = _content(attempt.data)
            if content is None:
                raise EntryError(f"the answer from {url} has no choices[0].message.content")
        except EntryError as exc:
            return {"id": entry["id"], "predicted": None, "error": str(exc), "latency_s": elapsed, "metadata": metadata}
        return {"id": entry["id"], "predicted": content.strip(), "latency_s": elapsed,
                "usage": _usage(attempt.data), "metadata": metadata}

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        problem = config_problem(config)
        if problem:
            return [{"id": entry["id"], "predicted": None, "error": problem} for entry in entries]
        limit = asyncio.Semaphore(config.concurrency)

        async def one(entry: dict[str, Any]) -> dict[str, Any]:
            reason = abstention(str(entry["source"]), config)
            if reason is not None:
                return {"id": entry["id"], "abstained": True, "abstain_reason": reason}
            async with limit:
                return await self.translate_one(entry, config)

        return list(await asyncio.gather(*(one(entry) for entry in entries)))


async def _attempt(url: str, body: dict[str, Any], headers: dict[str, str], timeout_s: float) -> Attempt:
    """`post` in a worker thread; cancelled, it cuts the request's connection (the thread ends at once)."""
    exchange = Exchange()
    try:
        return await asyncio.to_thread(post, url, body, headers, timeout_s, exchange)
    except asyncio.CancelledError:
        exchange.abort()
        raise


def _content(data: dict[str, Any]) -> str | None:
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else None


def _usage(data: dict[str, Any]) -> dict[str, int]:
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return {name: usage[name] for name in ("prompt_tokens", "completion_tokens")
            if isinstance(usage.get(name), int) and not isinstance(usage.get(name), bool) and usage[name] >= 0}
