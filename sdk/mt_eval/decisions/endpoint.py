"""One JSON-over-HTTP endpoint, called from async code: a POST per call in a worker thread, retried with
exponential backoff on rate limits, server errors, timeouts and refused connections (``Retry-After`` honoured),
failing with a message that names the status and the server's own explanation.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import anyio

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
MAX_BACKOFF_S = 8.0


class EndpointError(Exception):
    """A call failed for good (after its retries); the message says what the endpoint answered."""


@dataclass
class JsonEndpoint:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 120.0
    retries: int = 3
    backoff_s: float = 0.5

    async def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """The endpoint's JSON object answer to ``body``; `EndpointError` once retrying cannot help."""
        delay = self.backoff_s
        for attempt in range(self.retries + 1):
            answer, failure, transient, wait_s = await anyio.to_thread.run_sync(self._exchange, body)
            if failure is None:
                return answer
            if not transient or attempt == self.retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise EndpointError(failure + tries)
            await anyio.sleep(wait_s if wait_s is not None else delay)
            delay = min(delay * 2, MAX_BACKOFF_S)
        raise AssertionError("unreachable")

    def _exchange(self, body: dict[str, Any]) -> tuple[dict[str, Any], str | None, bool, float | None]:
        """(answer, failure, worth retrying, seconds the server asked to wait)."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(self.url, data=data, method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json",
                                                  **self.headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            explained = _explanation(exc.read())
            wait = _seconds(exc.headers.get("Retry-After"))
            return {}, f"{self.url} answered HTTP {exc.code}: {explained}", exc.code in RETRY_STATUSES, wait
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                return {}, f"{self.url} gave no answer within {self.timeout_s:g} s", True, None
            return {}, f"cannot reach {self.url}: {reason}", True, None
        try:
            answer = json.loads(raw)
        except ValueError:
            return {}, f"{self.url} answered something that is not JSON: {raw[:120]!r}", False, None
        if not isinstance(answer, dict):
            return {}, f"{self.url} answered JSON that is not an object", False, None
        return answer, None, False, None


def _explanation(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:300] or "(no body)"
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    if isinstance(error, str):
        return error
    message = parsed.get("message") if isinstance(parsed, dict) else None
    return message if isinstance(message, str) else text[:300]


def _seconds(header: str | None) -> float | None:
    if header is None:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        return None  # an HTTP date: the backoff applies
