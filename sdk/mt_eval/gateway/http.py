"""The gateway's HTTP/1.1 server side: an asyncio protocol per connection, parsed by httptools (the binding to
llhttp, Node's parser, that uvicorn uses), driven by callbacks — no task or future per request.

A connection hands each complete request to the handler, ``handler(request, connection)``, one at a time
(pipelined requests wait their turn), and the handler answers through the connection: whole (`respond`), or
streamed (`start_stream`, `write_chunk`, `end_stream`; chunked for HTTP/1.1, delimited by the end of the
connection for HTTP/1.0), now or later. The connection stays alive as HTTP/1.1 says. Whoever answers later
may set ``listener`` to hear that the client's connection paused, resumed or went away. Bad input gets its
HTTP error in OpenAI's JSON shape: 400 for what does not parse, 413 for a body over `MAX_BODY` (as soon as
its Content-Length says so, before it is sent), 414/431 for a target or headers over `MAX_HEAD`, 408 for a
request that stops arriving half-way (its head or its body shorter than its Content-Length) for `STALL_S`, or whose
head still lacks its end `HEAD_S` after it began (however steadily its bytes trickle in); ``Expect: 100-continue`` is
answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from http import HTTPStatus
from typing import Protocol

import httptools
import msgspec

MAX_BODY = 32 * 1024 * 1024
MAX_HEAD = 64 * 1024
STALL_S = 15.0  # a request begun, with no byte of it for this long, is answered 408 (the client will send no more)
HEAD_S = 30.0  # a request's head (request line and headers) not whole this long after it began is answered 408
# (however steadily it trickles in; counted from the sweep that first sees it begun: `mt_eval.gateway.http_server`)
_QUEUED = 8  # pipelined requests read ahead before reading pauses
_REASONS = {status.value: status.phrase.encode() for status in HTTPStatus}

logger = logging.getLogger("mt_eval.gateway")


def error_body(message: str, code: str, kind: str = "invalid_request_error") -> bytes:
    """An error in OpenAI's shape, which OpenAI clients show to the method as the message."""
    return msgspec.json.encode({"error": {"message": message, "type": kind, "code": code}})


class Request:
    """One parsed request. Header names are lower case; names and values stay bytes (most are only passed
    on)."""

    __slots__ = ("body", "headers", "keep_alive", "method", "path", "query", "version")

    def __init__(self, method: str, target: bytes, headers: dict[bytes, bytes], body: bytes, keep_alive: bool,
                 version: str) -> None:
        path, _, query = target.partition(b"?")
        self.method = method
        self.path = path.decode("latin-1")
        self.query = query.decode("latin-1")
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive
        self.version = version


class Listener(Protocol):
    """What an answer given later hears of the client's connection."""

    def pause(self) -> None: ...  # the client reads slower than the answer comes: stop reading the upstream
    def resume(self) -> None: ...
    def gone(self) -> None: ...  # the client closed the connection before the answer was complete


Handler = Callable[[Request, "ServerConnection"], None]
# Told of each request answered with an HTTP error before it reached the handler: (status, message, its path).
Unreadable = Callable[[int, str, str], None]


class _Refused(Exception):
    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


class ServerConnection(asyncio.Protocol):
    """One client connection (see the module docstring)."""

    def __init__(self, handler: Handler, connections: set[ServerConnection],
                 on_unreadable: Unreadable | None = None) -> None:
        self._handler = handler
        self._on_unreadable = on_unreadable
        self._connections = connections
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()
        self._queue: deque[Request] = deque()
        self._paused_reading = False
        self._write_paused = False
        self._target = b""
        self._headers: dict[bytes, bytes] = {}
        self._body: list[bytes] = []
        self._size = 0
        self.received = 0  # bytes read on the connection
        self._partial: str | None = None  # what of a request begun has arrived: None between requests, "head", "body"
        self._stall = (0, 0.0)  # (received, when) at the sweep that first saw the request begun get no further
        # (its headers, when) at the sweep that first saw a head begun: a new dict each request tells heads apart, free
        self._head_seen: tuple[dict[bytes, bytes] | None, float] = (None, 0.0)
        self.closed = False
        self.idle_since = self._loop.time()
        self.busy = False  # a request is being answered
        self._eof = False  # the client will send no more
        self.listener: Listener | None = None
        # the response being written
        self._version = "1.1"
        self._keep_alive = True
        self._chunked = False
        self.started = False  # its head was sent: an error now can only end the connection

    # -- the connection ---------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._queue.clear()
        self._connections.discard(self)
        listener, self.listener = self.listener, None
        if listener is not None and self.busy:
            listener.gone()

    def eof_received(self) -> bool:
        """The client closed its end. One that does so while its request is answered has given up on it (an HTTP/1.1
        client does not half-close and wait): the connection is closed, and the relay hears it is gone, abandons the
        upstream request and logs it as not delivered — as nginx does — rather than pays for an answer nobody reads.
        Requests queued behind it are dropped with it."""
        self._eof = True
        self._queue.clear()
        return False  # (the transport closes: `connection_lost` tells the listener)

    def pause_writing(self) -> None:
        self._write_paused = True
        if self.listener is not None:
            self.listener.pause()

    def resume_writing(self) -> None:
        self._write_paused = False
        if self.listener is not None:
            self.listener.resume()

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            refused = exc.__context__
            if not isinstance(refused, _Refused):
                raise
            self._unreadable(refused.status, str(refused), refused.code)
        except httptools.HttpParserUpgrade:
            self._unreadable(400, "this gateway speaks plain HTTP/1.1; it does not upgrade connections",
                             "bad_request")
        except httptools.HttpParserError as exc:
            self._unreadable(400, f"the request is not valid HTTP/1.1: {exc}", "bad_request")

    def _unreadable(self, status: int, message: str, code: str) -> None:
        """Answer a request that cannot be read, and close: what follows it on the connection is unreadable."""
        self._queue.clear()
        if not self.busy:
            self._keep_alive = False
            self.respond(status, "application/json", error_body(message, code))
        if self._on_unreadable is not None:
            self._on_unreadable(status, message, self._target.partition(b"?")[0].decode("latin-1"))
        self.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def overdue(self, now: float) -> str | None:
        """Why a request begun on the connection is to be answered 408, if it is (looked at every sweep): it has
        had no byte for `STALL_S`, or its head is not whole `HEAD_S` after it began."""
        if self._partial is None or self.closed:
            return None
        if self._stall[0] != self.received:
            self._stall = (self.received, now)
        elif now - self._stall[1] >= STALL_S:
            waited = f"and nothing more came for {STALL_S:g} s"
            if self._partial == "head":
                return (f"the request's head stopped arriving before the blank line that ends its headers, {waited}: "
                        "send the whole request")
            length = self._headers.get(b"content-length", b"").strip()
            announced = f" of the {length.decode('latin-1')} its Content-Length announces" if length.isdigit() else ""
            return (f"the request's body stopped arriving after {self._size:,} bytes{announced}, {waited}: send "
                    "the whole body, with a Content-Length that is its size in bytes")
        if self._partial == "head" and self._head_seen[0] is not self._headers:
            self._head_seen = (self._headers, now)
        elif self._partial == "head" and now - self._head_seen[1] >= HEAD_S:
            return (f"the request's head did not arrive in time: {HEAD_S:g} s after it began, only {self._size:,} "
                    "bytes of its target and headers had come, and not the blank line that ends them: send the "
                    "whole head at once")
        return None

    def time_out_request(self, message: str) -> None:
        """Answer a request that is `overdue` with a 408 that says why, and close."""
        self._unreadable(408, message, "request_timeout")

    # -- httptools callbacks ----------------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._partial = "head"
        self._target = b""
        self._headers = {}
        self._body = []
        self._size = 0

    def on_url(self, url: bytes) -> None:
        self._target += url
        self._size += len(url)
        if self._size > MAX_HEAD:
            raise _Refused(414, f"the request's target is over {MAX_HEAD // 1024} KiB", "uri_too_long")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._size += len(name) + len(value)
        if self._size > MAX_HEAD:
            raise _Refused(431, f"the request's headers are over {MAX_HEAD // 1024} KiB", "headers_too_large")
        self._headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self._partial = "body"
        self._size = 0
        length = self._headers.get(b"content-length", b"").strip()
        if length.isdigit() and int(length) > MAX_BODY:  # refused before its body is sent (or invited: 100-continue)
            raise _Refused(413, f"the request body ({int(length):,} bytes, its Content-Length says) is over the "
                           f"gateway's limit of {MAX_BODY // (1024 * 1024)} MiB", "request_too_large")
        if self._headers.get(b"expect", b"").lower() == b"100-continue" and self._transport is not None:
            self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_BODY:
            raise _Refused(413, f"the request body is over the gateway's limit of {MAX_BODY // (1024 * 1024)} MiB",
                           "request_too_large")
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._partial = None
        parser = self._parser
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._queue.append(Request(parser.get_method().decode("latin-1"), self._target, self._headers, body,
                                   parser.should_keep_alive(), parser.get_http_version()))
        if not self.busy:
            self._next()
        elif len(self._queue) > _QUEUED and self._transport is not None:
            self._transport.pause_reading()
            self._paused_reading = True

    # -- answering, one request at a time ---------------------------------------------------------------
    def _next(self) -> None:
        if not self._queue or self.closed:
            return
        request = self._queue.popleft()
        self.busy, self.started, self._chunked = True, False, False
        self._keep_alive, self._version = request.keep_alive, request.version
        if self._paused_reading and len(self._queue) <= _QUEUED and self._transport is not None:
            self._paused_reading = False
            self._transport.resume_reading()
        try:
            self._handler(request, self)
        except Exception:  # a bug must not leave the method waiting
            logger.exception("the gateway failed on %s %s", request.method, request.path)
            if self.busy and not self.started:
                self.respond(500, "application/json", error_body(
                    "the gateway failed on this request (its log says why)", "gateway_error", "api_error"))
            elif self.busy:
                self.close()

    def _finished(self) -> None:
        self.busy, self.listener = False, None
        self.idle_since = self._loop.time()
        if not self._keep_alive or (self._eof and not self._queue):
            self.close()
        elif self._queue:
            self._loop.call_soon(self._next)

    def _head(self, status: int, content_type: bytes, framing: bytes) -> bytes:
        connection = b"Connection: close\r\n" if not self._keep_alive else \
            b"" if self._version == "1.1" else b"Connection: keep-alive\r\n"
        return b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s%s\r\n" % (
            status, _REASONS.get(status, b"Status"), content_type, framing, connection)

    def close_after_answer(self) -> None:
        """The request in hand is the connection's last: its response says so (``Connection: close``), and the
        connection closes once it is sent."""
        self._keep_alive = False

    def respond(self, status: int, content_type: bytes | str, body: bytes, headers: bytes = b"") -> None:
        """Send a whole response (``headers``: more header lines, each ending in CRLF); the request is answered."""
        if isinstance(content_type, str):
            content_type = content_type.encode("latin-1")
        self.started = True
        if self._transport is not None and not self.closed:
            framing = b"Content-Length: %d\r\n%s" % (len(body), headers)
            self._transport.write(self._head(status, content_type, framing) + body)
        self._finished()

    def start_stream(self, status: int, content_type: bytes, headers: bytes = b"") -> None:
        """Send the head of a response whose body follows in `write_chunk`s, ended by `end_stream`."""
        self.started = True
        self._chunked = self._version == "1.1"
        if not self._chunked:
            self._keep_alive = False  # HTTP/1.0: the body ends with the connection
        if self._transport is not None and not self.closed:
            self._transport.write(self._head(status, content_type,
                                             (b"Transfer-Encoding: chunked\r\n" if self._chunked else b"") + headers))

    def write_chunk(self, data: bytes) -> None:
        if data and self._transport is not None and not self.closed:
            self._transport.write(b"%x\r\n%s\r\n" % (len(data), data) if self._chunked else data)

    @property
    def writing_paused(self) -> bool:
        return self._write_paused

    def end_stream(self) -> None:
        if self._chunked and self._transport is not None and not self.closed:
            self._transport.write(b"0\r\n\r\n")
        self._finished()

    def break_off(self) -> None:
        """End a streamed response that cannot be completed: closing tells the client it is cut short."""
        self._keep_alive = False
        self._finished()

