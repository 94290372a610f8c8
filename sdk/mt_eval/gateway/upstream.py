"""The gateway's client side: HTTP/1.1 exchanges with the upstreams over kept-alive connections pooled per
origin (asyncio protocols, answers parsed by httptools), driven by callbacks.

`UpstreamPool.send` writes a request (head and body in one write) on an idle connection to its origin, or on
a new one (TLS for https), and tells the `Exchange` what comes back: the status and headers, each piece of
the body (decoded from chunked framing, and from gzip or deflate, which the gateway does not ask for but an
upstream may send anyway: expanded `DECODED_PIECE` at a time), the end, or the failure (`AnswerTooLarge` for a
head, status line and headers, over `MAX_HEAD`, which the parser would otherwise hold without end). A kept-alive
connection that the upstream closed while it sat idle is noticed and the request sent again on a fresh one,
once.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from typing import NamedTuple
from urllib.parse import urlsplit

import httptools

from mt_eval.gateway.http import MAX_HEAD

IDLE_KEEP_S = 15.0  # an idle upstream connection older than this is not reused
IDLE_MAX = 64  # idle connections kept per origin
# The most of a compressed answer expanded at once: a few KiB of gzip can stand for gigabytes (a decompression
# bomb), which would be held whole before the exchange could weigh them against its limit.
DECODED_PIECE = 256 * 1024
# The headers of an answer passed back to the method: when to try again after a 429 or a 503, which OpenAI's clients
# wait for (without them they retry sooner, and are refused again).
PASSED_BACK = (b"retry-after", b"retry-after-ms")
_READ_HEADERS = frozenset((b"content-type", b"content-length", b"transfer-encoding", b"content-encoding",
                           *PASSED_BACK))


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int

    @property
    def host_header(self) -> bytes:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (host if self.port == default else f"{host}:{self.port}").encode("idna")


def split_url(url: str) -> tuple[Origin, str]:
    """(origin, path) of an http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Origin(parts.scheme, parts.hostname, port), parts.path or "/"


class UpstreamError(ConnectionError):
    """The upstream broke off its answer, or gave one that cannot be read."""


class AnswerTooLarge(UpstreamError):
    """The upstream's answer is over a limit of the gateway (its head over `MAX_HEAD`, or its body over
    `mt_eval.gateway.relay.MAX_ANSWER`): the rest is not read."""


class Exchange:
    """One request to an upstream. Subclasses override the ``on_`` callbacks; exactly one of `on_done` and
    `on_failed` ends it, unless `abort` did first."""

    upstream: UpstreamConnection | None = None  # the connection carrying it, once sent
    over = False
    retried = False

    def on_head(self, status: int, headers: dict[bytes, bytes]) -> None:
        """The status and the headers the gateway uses (`_READ_HEADERS`)."""

    def on_body(self, data: bytes) -> None: ...
    def on_done(self) -> None: ...
    def on_failed(self, error: OSError) -> None: ...

    def abort(self) -> None:
        """Stop: the answer is not wanted (the client went away, or time ran out)."""
        self.over = True
        upstream, self.upstream = self.upstream, None
        if upstream is not None:
            upstream.abort()

    def pause(self) -> None:
        """Stop reading the answer for now (the client reads slower than it comes)."""
        if self.upstream is not None:
            self.upstream.pause()

    def resume(self) -> None:
        if self.upstream is not None:
            self.upstream.resume()


class UpstreamConnection(asyncio.Protocol):
    """One connection to an origin, carrying one exchange at a time."""

    def __init__(self, pool: UpstreamPool, origin: Origin) -> None:
        self._pool = pool
        self.origin = origin
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._exchange: Exchange | None = None
        self._message = b""
        self._headers: dict[bytes, bytes] = {}
        self._status = 0
        self._decoder: zlib._Decompress | None = None
        self._received = False
        self._head_size = 0  # bytes received of the answer's head, while it is not whole
        self._delimited_by_close = False
        self.closed = False
        self.idle_since = 0.0
        self.reused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def start(self, message: bytes, exchange: Exchange) -> None:
        assert self._transport is not None
        self._exchange, self._message = exchange, message
        exchange.upstream = self
        self._received, self._status, self._headers, self._head_size = False, 0, {}, 0
        self._transport.write(message)

    def pause(self) -> None:
        if self._transport is not None and not self.closed:
            self._transport.pause_reading()

    def resume(self) -> None:
        if self._transport is not None and not self.closed:
            self._transport.resume_reading()

    def abort(self) -> None:
        self.closed = True
        self._exchange = None
        if self._transport is not None:
            self._transport.abort()

    def data_received(self, data: bytes) -> None:
        self._received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(UpstreamError(f"its answer is not valid HTTP: {exc}"))
            return
        if not self._status and self._exchange is not None:  # its head is not whole yet: all it sent is head
            self._head_size += len(data)
            if self._head_size > MAX_HEAD:  # (httptools would hold a header line that never ends whole)
                self._fail(AnswerTooLarge(f"the head of its answer (status line and headers) is over "
                                          f"{MAX_HEAD // 1024} KiB, the most the gateway reads of it; an upstream "
                                          "sends a few hundred bytes"))

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._pool.forget(self)
        exchange, self._exchange = self._exchange, None
        if exchange is None or exchange.over:
            return
        exchange.upstream = None
        if self._delimited_by_close and self._status:  # a body that ends when the connection does
            self._flush_decoder(exchange)
            exchange.on_done()
        elif not self._received and self.reused and not exchange.retried:  # closed while it sat idle
            exchange.retried = True
            self._pool.send(self.origin, self._message, exchange)
        else:
            exchange.on_failed(UpstreamError("it closed the connection before it finished answering"
                                             + (f" ({exc})" if exc else "")))

    def _fail(self, error: OSError) -> None:
        exchange = self._exchange
        self.abort()
        if exchange is not None and not exchange.over:
            exchange.upstream = None
            exchange.on_failed(error)

    # -- httptools callbacks ----------------------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name in _READ_HEADERS:
            self._headers[name] = value

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if status < 200:  # an interim answer (100 Continue): the real one follows
            self._headers = {}
            return
        self._status = status
        headers = self._headers
        self._delimited_by_close = b"content-length" not in headers and \
            b"chunked" not in headers.get(b"transfer-encoding", b"").lower()
        encoding = headers.get(b"content-encoding", b"identity").strip().lower()
        self._decoder = None
        if encoding in (b"gzip", b"x-gzip", b"deflate"):
            self._decoder = zlib.decompressobj(wbits=47)  # gzip or zlib, told apart by their headers
        elif encoding not in (b"identity", b""):
            self._fail(UpstreamError(f"it answered in the {encoding.decode('latin-1')} encoding, which the "
                                     "gateway cannot read (it asks for none)"))
            return
        if self._exchange is not None:
            self._exchange.on_head(status, headers)

    def on_body(self, body: bytes) -> None:
        if self._decoder is None:
            if body and self._exchange is not None:
                self._exchange.on_body(body)
            return
        while body and self._exchange is not None:  # (None once the exchange gave up: over its limit, or gone)
            try:
                decoded = self._decoder.decompress(body, DECODED_PIECE)
            except zlib.error as exc:
                self._fail(UpstreamError(f"its compressed answer is corrupt: {exc}"))
                return
            body = self._decoder.unconsumed_tail
            if decoded:
                self._exchange.on_body(decoded)

    def _flush_decoder(self, exchange: Exchange) -> None:
        if self._decoder is not None:
            rest = self._decoder.flush()
            if rest:
                exchange.on_body(rest)

    def on_message_complete(self) -> None:
        exchange = self._exchange
        if exchange is None or not self._status:
            return
        self._exchange = None
        exchange.upstream = None
        if self._parser.should_keep_alive() and not self._delimited_by_close:
            self._pool.release(self)
        elif self._transport is not None:
            self._transport.close()
        self._flush_decoder(exchange)
        exchange.on_done()


class UpstreamPool:
    """Kept-alive connections to the upstreams, per origin. Use from one event loop; `close` when done."""

    def __init__(self) -> None:
        self._idle: dict[Origin, list[UpstreamConnection]] = {}
        self._ssl: ssl.SSLContext | None = None
        self._open: set[UpstreamConnection] = set()
        self._connecting: set[asyncio.Task[None]] = set()

    def send(self, origin: Origin, message: bytes, exchange: Exchange) -> None:
        """Send ``message`` (a whole request) to ``origin``; ``exchange`` hears what comes of it."""
        connection = self._reuse(origin)
        if connection is not None:
            connection.start(message, exchange)
            return
        task = asyncio.get_running_loop().create_task(self._connect_and_send(origin, message, exchange))
        self._connecting.add(task)
        task.add_done_callback(self._connecting.discard)

    async def _connect_and_send(self, origin: Origin, message: bytes, exchange: Exchange) -> None:
        try:
            connection = await self._connect(origin)
        except OSError as exc:
            if not exchange.over:
                exchange.on_failed(exc)
            return
        if exchange.over:  # given up on while connecting: keep the connection for the next one
            self.release(connection)
        else:
            connection.start(message, exchange)

    def _reuse(self, origin: Origin) -> UpstreamConnection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        cutoff = time.monotonic() - IDLE_KEEP_S  # (not the loop's clock: asking for the loop is a getpid() on 3.11)
        while idle:
            connection = idle.pop()
            if not connection.closed and connection.idle_since >= cutoff:
                connection.reused = True
                return connection
            connection.abort()
        return None

    async def _connect(self, origin: Origin) -> UpstreamConnection:
        loop = asyncio.get_running_loop()
        secure = origin.scheme == "https"
        if secure and self._ssl is None:
            self._ssl = ssl.create_default_context()
        _, connection = await loop.create_connection(lambda: UpstreamConnection(self, origin), origin.host,
                                                     origin.port, ssl=self._ssl if secure else None,
                                                     server_hostname=origin.host if secure else None)
        self._open.add(connection)
        return connection

    def release(self, connection: UpstreamConnection) -> None:
        if connection.closed:
            return
        idle = self._idle.setdefault(connection.origin, [])
        if len(idle) >= IDLE_MAX:
            connection.abort()
            return
        connection.idle_since = time.monotonic()
        idle.append(connection)

    def forget(self, connection: UpstreamConnection) -> None:
        self._open.discard(connection)
        idle = self._idle.get(connection.origin)
        if idle and connection in idle:
            idle.remove(connection)

    def close(self) -> None:
        for task in list(self._connecting):
            task.cancel()
        for connection in list(self._open):
            connection.abort()
        self._idle.clear()
