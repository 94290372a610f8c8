"""JSON over HTTP for this method, with failures worded for its results' ``error`` field.

Only the standard library is used; http_json.js beside this file is the Node twin.
"""

from __future__ import annotations

import asyncio
import errno
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


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


def post_json(url: str, body: dict[str, Any], timeout_s: float,
              headers: dict[str, str] | None = None) -> dict[str, Any]:
    """POST ``body`` as JSON and return the decoded JSON object; failures raise `EntryError`."""
    request = urllib.request.Request(url, data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                     headers={"Content-Type": "application/json", **(headers or {})}, method="POST")
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


async def in_threads(entries: list[dict[str, Any]], concurrency: int,
                     translate_one: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """``translate_one`` for every entry in worker threads, at most ``concurrency`` at a time, in entry order."""
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(entry: dict[str, Any]) -> dict[str, Any]:
        async with limit:
            return await asyncio.to_thread(translate_one, entry)

    return list(await asyncio.gather(*(one(entry) for entry in entries)))
