"""One JSON-over-HTTP endpoint, called from async code: a POST per call in a worker thread, retried with
exponential backoff on rate limits, server errors, timeouts and refused connections (``Retry-After`` honoured),
failing with a message that names the status and the server's own explanation.

A call's attempts, and the waits between them, fit in its ``timeout_s``: each attempt waits only for what is left
of it, and no retry starts once it is spent, so a row fails with the endpoint's own reason before the run's
deadline for it. A cancelled call (that deadline, Ctrl-C) cuts its request's connection at once: the worker
thread ends, and the server is not left waiting.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
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
        """The endpoint's JSON object answer to ``body``; `EndpointError` once retrying cannot help, or once
        ``timeout_s`` is spent."""
        deadline = time.perf_counter() + self.timeout_s
        delay = self.backoff_s
        attempts = 0
        while True:
            answer, failure, transient, wait_s = await self._attempt(body, deadline - time.perf_counter())
            attempts += 1
            if failure is None:
                return answer
            pause = wait_s if wait_s is not None else delay
            if not transient or attempts > self.retries or time.perf_counter() + pause >= deadline:
                raise EndpointError(failure + (f" (after {attempts} attempts)" if attempts > 1 else ""))
            await anyio.sleep(pause)
            delay = min(delay * 2, MAX_BACKOFF_S)

    async def _attempt(self, body: dict[str, Any], seconds: float
                       ) -> tuple[dict[str, Any], str | None, bool, float | None]:
        """`_exchange` in a worker thread, for ``seconds`` at most; cancelled (or out of time), it cuts the
        request's connection, which ends the thread at once."""
        connections = Connections()
        seconds = max(seconds, 0.01)
        with anyio.move_on_after(seconds):
            try:
                return await anyio.to_thread.run_sync(self._exchange, body, seconds, connections,
                                                      abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                connections.cut()
                raise
        return {}, self._no_answer(), True, None  # (a server that trickles its answer past the time left)

    def _no_answer(self) -> str:
        return f"{self.url} gave no answer within {self.timeout_s:g} s"

    def _exchange(self, body: dict[str, Any], seconds: float, connections: Connections
                  ) -> tuple[dict[str, Any], str | None, bool, float | None]:
        """(answer, failure, worth retrying, seconds the server asked to wait)."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(self.url, data=data, method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json",
                                                  **self.headers})
        opener = urllib.request.build_opener(_Handler(connections), _SecureHandler(connections))
        try:
            with opener.open(request, timeout=seconds) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            explained = _explanation(exc.read())
            wait = _seconds(exc.headers.get("Retry-After"))
            return {}, f"{self.url} answered HTTP {exc.code}: {explained}", exc.code in RETRY_STATUSES, wait
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                return {}, self._no_answer(), True, None
            return {}, f"cannot reach {self.url}: {reason}", True, None
        try:
            answer = json.loads(raw)
        except ValueError:
            return {}, f"{self.url} answered something that is not JSON: {raw[:120]!r}", False, None
        if not isinstance(answer, dict):
            return {}, f"{self.url} answered JSON that is not an object", False, None
        return answer, None, False, None


class Connections:
    """The connections of one request, opened in a worker thread, which the event loop can `cut`: the thread's
    blocked read or connect then fails at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cut = False

    def opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self._cut:
                _shut(sock)

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    """The plain socket's shutdown, under TLS too: it wakes the thread reading from it."""
    with contextlib.suppress(OSError):  # (already closed)
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Connection(http.client.HTTPConnection):
    """A connection that tells its `Connections` of its socket (``_SecureConnection``: under TLS)."""

    def __init__(self, *args: Any, connections: Connections, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connections = connections

    def connect(self) -> None:
        super().connect()
        self.connections.opened(self.sock)


class _SecureConnection(_Connection, http.client.HTTPSConnection):
    pass


class _Handler(urllib.request.HTTPHandler):
    def __init__(self, connections: Connections) -> None:
        super().__init__()
        self.connections = connections

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Connection, req, connections=self.connections)  # type: ignore[arg-type]  # (a keyword)


class _SecureHandler(urllib.request.HTTPSHandler):
    def __init__(self, connections: Connections) -> None:
        super().__init__()
        self.connections = connections

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_SecureConnection, req, context=self._context,  # type: ignore[arg-type,attr-defined]
                            connections=self.connections)


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
