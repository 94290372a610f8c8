"""The LLM gateway: an OpenAI-compatible proxy that forwards only allowlisted, pinned models, within a
token budget, and logs every exchange (`mt_eval.gateway.audit`).

It reads of each request only what its rules need — the ``model`` and ``stream`` fields of the JSON body —
and passes the body on as it came (rewritten only for a route's ``upstream_model``); of each answer it reads
only the token usage. Both HTTP ends are lean asyncio protocols driven by callbacks (`mt_eval.gateway.http`
for the method's side, `mt_eval.gateway.upstream` for kept-alive, pooled upstream connections,
`mt_eval.gateway.relay` in between), on uvloop where it is installed (`mt_eval.event_loop`), so a request
costs the gateway a few tens of microseconds. It serves a Unix socket (a sandbox's only way out) or a TCP
port, from a thread of the harness (`GatewayThread`) or on its own (``mt-eval gateway``). Log lines are
written once per turn of the event loop, together.

A refusal is an HTTP error in OpenAI's shape — ``{"error": {"message", "type", "code"}}`` — that tells the
method what it asked for and what it may use: 400 ``invalid_json`` (the body is not a JSON object), 400
``model_missing``, 400 ``invalid_stream_options`` (not an object), 403 ``model_not_allowed``, 403
``token_budget_exhausted``, 404 for what is not a model endpoint, 502 ``upstream_unreachable`` when the
upstream cannot be reached or breaks off, 502 ``upstream_answer_too_large`` for an answer over
`mt_eval.gateway.relay.MAX_ANSWER` (256 MiB: the rest is not read) or whose head (status line and headers) is over
64 KiB, 504 ``upstream_timeout`` when it does not
answer within the policy's ``timeout_s``, 503 ``audit_log_unwritable`` while its log cannot be written (a
full disk). Every refusal is logged, those the HTTP side makes too (a body over its limit, a request that is
not HTTP, 408 ``request_timeout`` for one that stopped arriving half-way or whose head came too slowly).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import stat
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from mt_eval._version import __version__
from mt_eval.background_threads import BackgroundThread
from mt_eval.event_loop import new_event_loop
from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.http import Request, ServerConnection, error_body, logger
from mt_eval.gateway.http_server import HttpServer
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute, unsendable
from mt_eval.gateway.relay import JSON, Relay, usage_of
from mt_eval.gateway.upstream import Origin, UpstreamPool, split_url
from mt_eval.js_text import js_string
from mt_eval.lone_surrogates import escaped_lone_surrogate
from mt_eval.value_words import value_in_words

__all__ = ["Gateway", "GatewayThread", "new_event_loop", "usage_of"]

FORWARDED_HEADERS = (b"content-type", b"accept", b"openai-organization", b"openai-project")
CONCURRENCY = 256  # upstream exchanges at once; more wait their turn
CLOSE_GRACE_S = 10.0  # how long a stopping gateway lets the requests in flight finish
# The endpoints forwarded upstream, matched exactly: any other path (another API such as /v1/files, or one
# with ``..`` that would climb out of the upstream's /v1) would be sent with the gateway's API key.
MODEL_ENDPOINTS = frozenset({"/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"})


class _Ask(msgspec.Struct):
    """What the gateway reads of a request body (everything else is skipped unread)."""

    model: Any = None
    stream: Any = None
    stream_options: Any = None


_ask_decoder = msgspec.json.Decoder(_Ask)
# Where a streamed answer reports its token usage only when asked (``stream_options.include_usage``).
USAGE_ON_REQUEST = ("/v1/chat/completions", "/v1/completions")


def _asks_for_usage(options: Any) -> bool:
    return isinstance(options, dict) and options.get("include_usage") is True


class _Route:
    """Where one allowlisted model is served, and the part of the request head that is the same for every
    request to it."""

    def __init__(self, route: ModelRoute, policy: GatewayPolicy, environ: Mapping[str, str]) -> None:
        base_url, key_variable = policy.upstream(route)
        self.origin: Origin | None = None
        self.prefix = ""
        self.query = ""  # the base_url's own query (Azure's ?api-version=…), put before the request's own
        self.problem: str | None = None
        try:
            self.origin, self.prefix = split_url(base_url)
            self.query = base_url.partition("?")[2].partition("#")[0]
            host_header = self.origin.host_header
        except ValueError:  # (UnicodeError too: a host name with an empty or over-long label; `--check` says so)
            self.origin, self.problem = None, f"the policy's base_url for {route.id} ({base_url!r}) is not an " \
                                              "http(s) URL with a valid host name"
            return
        key = environ.get(key_variable) if key_variable else None
        if key and unsendable(key) is not None:  # (`mt-eval gateway` refuses to start; a run's own gateway says so)
            self.origin, self.problem = None, (f"${key_variable}, the API key of {route.id}, holds a character an "
                                               "HTTP header cannot carry: set it to the key alone, as the provider "
                                               "gave it")
            return
        self.fixed = (b"Host: %s\r\nUser-Agent: mt-eval-gateway/%s\r\nAccept-Encoding: identity\r\n"
                      % (host_header, __version__.encode()))
        if key:
            self.fixed += b"Authorization: Bearer %s\r\n" % key.encode("latin-1")
        self.rename = route.upstream_model


class Gateway:
    """One gateway: ``await start(...)``, then ``await close()``; totals are in ``log``."""

    def __init__(self, policy: GatewayPolicy, log: AuditLog, *, environ: Mapping[str, str] | None = None) -> None:
        self.policy = policy
        self.log = log
        environ = os.environ if environ is None else environ
        self.allowed = ", ".join(r.id for r in policy.models)
        self._routes = {r.id: _Route(r, policy, environ) for r in policy.models}
        self._models_body = msgspec.json.encode({"object": "list", "data": [
            {"id": r.id, "object": "model", "owned_by": "gateway"} for r in policy.models]})
        self._server = HttpServer(self.handle, self.unreadable)
        self._pool = UpstreamPool()
        self._flush_scheduled = False
        self._deadlines: dict[Relay, float] = {}  # relays in flight, and when their time is up
        self._waiting: deque[tuple[Relay, Origin, bytes]] = deque()  # beyond CONCURRENCY, in order
        self._active: set[Relay] = set()  # sent upstream
        self._watch: asyncio.TimerHandle | None = None
        self._closing = False
        self._stopping = False  # (`close` has begun: new requests are refused)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.url: str | None = None
        self._unix: Path | None = None  # the Unix socket it listens on

    async def start(self, *, unix: Path | None = None, host: str = "127.0.0.1", port: int = 0,
                    sock: socket.socket | None = None, unix_mode: int = 0o600) -> str:
        """Listen on the Unix socket ``unix`` (made ``unix_mode``: its user's only by default; removed by
        `close`), on the listening socket ``sock``, else on ``host:port``; returns the base URL (``…/v1``, an
        IPv6 address in brackets, or ``unix:PATH``)."""
        self._loop = asyncio.get_running_loop()
        if unix is not None:
            await self._server.listen(unix=str(unix))
            os.chmod(unix, unix_mode)
            self._unix = unix
            self.url = f"unix:{unix}"
        else:
            bound = await self._server.listen(sock=sock, host=host, port=port)
            address = f"[{bound[0]}]" if ":" in str(bound[0]) else bound[0]
            self.url = f"http://{address}:{bound[1]}/v1"
        self._watch = self._loop.call_later(self._tick, self._expire)
        return self.url

    @property
    def in_flight(self) -> int:
        """Requests forwarded (or waiting their turn) and not yet answered."""
        return len(self._deadlines)

    async def close(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """Stop listening; let the requests in flight finish for up to ``grace_s`` (or until `hurry`); answer
        the rest 503 ``gateway_stopped``, log them, and close the log. A request that arrives meanwhile (on a
        connection kept alive) is not sent upstream: it is answered 503 ``gateway_stopped`` at once. The policy's
        ``timeout_s`` still holds while the requests in flight finish."""
        self._stopping = True
        await self._server.drain(grace_s)
        if self._watch is not None:
            self._watch.cancel()
        self._closing = True  # (nothing waiting is sent upstream now)
        for relay in list(self._deadlines):
            relay.stopped()
        await self._server.close_connections()
        self._pool.close()
        self.log.close()
        if self._unix is not None:
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(self._unix.lstat().st_mode):
                    self._unix.unlink()

    def hurry(self) -> None:
        """`close` waits no longer for the requests in flight (a second Ctrl-C)."""
        self._server.hurry()

    @property
    def _tick(self) -> float:
        return min(1.0, self.policy.timeout_s / 4)

    def _expire(self) -> None:
        """End the relays whose time is up: one timer for all of them costs less than one per request."""
        assert self._loop is not None
        now = self._loop.time()
        for relay, deadline in list(self._deadlines.items()):
            if deadline <= now:
                relay.expire()
        self._watch = self._loop.call_later(self._tick, self._expire)

    # -- requests ---------------------------------------------------------------------------------------
    def handle(self, request: Request, client: ServerConnection) -> None:
        if self._stopping:
            client.close_after_answer()
            return self.refuse(request, client, None, 503, "the gateway is stopping: this request was not sent "
                               "upstream", "gateway_stopped", time.perf_counter())
        if request.method == "POST" and request.path in MODEL_ENDPOINTS:
            self.forward(request, client)
        elif request.method == "GET" and request.path.rstrip("/") == "/v1/models":
            client.respond(200, JSON, self._models_body)
        else:  # logged as a refusal: nothing but a model endpoint reaches the upstream
            self.refuse(request, client, None, 404,
                        f"{request.method} {request.path} is not a model endpoint of this gateway (it serves POST "
                        "/v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses and GET /v1/models)",
                        "not_found", time.perf_counter())

    def unreadable(self, status: int, message: str, path: str) -> None:
        """A request the HTTP side answered with an error (too large, not HTTP): logged as refused."""
        self._write({"path": path or None, "model": None, "status": status, "refused": message,
                     "request_sha256": None, "request_bytes": None, "response_sha256": None, "response_bytes": None,
                     "prompt_tokens": 0, "completion_tokens": 0, "latency_s": 0.0})

    def refuse(self, request: Request, client: ServerConnection, model: str | None, status: int, message: str,
               code: str, started: float) -> None:
        body = error_body(message, code)
        client.respond(status, JSON, body)
        self._write({"path": request.path, "model": model, "status": status, "refused": message,
                     "request_sha256": hashlib.sha256(request.body).hexdigest(), "request_bytes": len(request.body),
                     "response_sha256": hashlib.sha256(body).hexdigest(), "response_bytes": len(body),
                     "prompt_tokens": 0, "completion_tokens": 0, "latency_s": round(time.perf_counter() - started, 6)})

    def forward(self, request: Request, client: ServerConnection) -> None:
        started = time.perf_counter()
        if (failed := self.log.error) is not None:  # (no exchange goes unlogged)
            return self.refuse(request, client, None, 503, "the gateway's audit log cannot be written "
                               f"({failed.strerror or failed}): no request is sent upstream until it can",
                               "audit_log_unwritable", started)
        body = request.body
        try:
            ask = _ask_decoder.decode(body)
        except (msgspec.DecodeError, RecursionError) as exc:  # not JSON, not an object, or too deep to read
            lone = escaped_lone_surrogate(body) if isinstance(exc, msgspec.DecodeError) else None
            why = ("the body is empty" if not body.strip() else "arrays and objects nested too deep to read"
                   if isinstance(exc, RecursionError) else str(exc) if lone is None
                   else f"a lone surrogate escaped at byte {lone[1]} ({lone[0]}), which is not Unicode text; send the "
                        "character itself")
            return self.refuse(request, client, None, 400, f"the request body is not a JSON object ({why}): send "
                               f'one with a "model" (one of {self.allowed})', "invalid_json", started)
        model = ask.model
        if not isinstance(model, str):
            what = ('the request has no "model"' if model is None
                    else f'the request\'s "model" is {value_in_words(model)}, not a string')
            return self.refuse(request, client, None, 400, f"{what}: name one of the allowed models ({self.allowed})",
                               "model_missing", started)
        if ask.stream_options is not None and not isinstance(ask.stream_options, dict):  # (null: left out)
            return self.refuse(request, client, model, 400, f'the request\'s "stream_options" is '
                               f"{value_in_words(ask.stream_options)}, not an object: send an object, such as "
                               '{"include_usage": true}, or leave it out', "invalid_stream_options", started)
        route = self._routes.get(model)
        if route is None:
            return self.refuse(request, client, model, 403, f"model {js_string(model)} is not on this gateway's "
                               f"allowlist; allowed: {self.allowed}", "model_not_allowed", started)
        budget = self.policy.token_budget
        if budget is not None and self.log.tokens >= budget:
            return self.refuse(request, client, model, 403, f"the run's token budget of {budget} is spent "
                               f"({self.log.tokens} tokens used)", "token_budget_exhausted", started)
        if route.origin is None:
            return self.refuse(request, client, model, 502, str(route.problem), "upstream_unreachable", started)
        sent = body
        changes: dict[str, Any] = {"model": route.rename} if route.rename else {}
        hide_usage = ask.stream is True and request.path in USAGE_ON_REQUEST and not _asks_for_usage(ask.stream_options)
        if hide_usage:  # (else its tokens would count 0; the chunk it adds is read, not passed on: `Relay`)
            changes["stream_options"] = {**(ask.stream_options or {}), "include_usage": True}
        if changes:
            sent = msgspec.json.encode({**msgspec.json.decode(body), **changes})
        query = "&".join(part for part in (route.query, request.query) if part)
        target = route.prefix.rstrip("/") + request.path[3:] + (f"?{query}" if query else "")
        head = b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n" % (target.encode("latin-1"), route.fixed, len(sent))
        headers = request.headers
        if b"content-type" not in headers:
            head += b"Content-Type: application/json\r\n"  # what the body was just read as
        for name in FORWARDED_HEADERS:
            if name in headers:
                head += b"%s: %s\r\n" % (name, headers[name])
        record = {"path": request.path, "model": model, "refused": None, "stream": ask.stream is True,
                  "request_sha256": hashlib.sha256(body).hexdigest(), "request_bytes": len(body)}
        relay = Relay(self, client, record, body, started, hide_usage=hide_usage)
        assert self._loop is not None
        self._deadlines[relay] = self._loop.time() + self.policy.timeout_s
        if len(self._active) < CONCURRENCY:
            self._active.add(relay)
            self._pool.send(route.origin, head + b"\r\n" + sent, relay)
        else:
            self._waiting.append((relay, route.origin, head + b"\r\n" + sent))

    def finished(self, relay: Relay) -> None:
        """A relay has ended: log it, and let a waiting one go."""
        self._deadlines.pop(relay, None)
        self._active.discard(relay)
        self._write(relay.record)
        while self._waiting and len(self._active) < CONCURRENCY and not self._closing:
            waiting, origin, message = self._waiting.popleft()
            if not waiting.over:
                self._active.add(waiting)
                self._pool.send(origin, message, waiting)

    def _write(self, record: dict[str, Any]) -> None:
        """Log a record; the lines of one turn of the event loop are written together after it."""
        self.log.write(record)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            assert self._loop is not None
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        failing = self.log.error is not None
        self.log.flush()
        if (error := self.log.error) is not None and not failing:
            logger.error("the gateway's audit log %s cannot be written (%s): model requests are refused 503 "
                         "until it can; make room for it", self.log.path, error.strerror or error)
        elif error is None and failing:
            logger.error("the gateway's audit log %s is written again: model requests are forwarded again",
                         self.log.path)


class GatewayThread:
    """A gateway served from its own thread and event loop, so nothing done on the harness's loop (an
    in-process method that blocks it, scoring, hooks) can stall the method's own model calls."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._loop = new_event_loop()
        self._thread = BackgroundThread(target=self._loop.run_forever, name="mt-eval-gateway", daemon=True)

    def start(self, **where: Any) -> str:
        """Start serving (``where``: as `Gateway.start`); returns its URL."""
        self._thread.start()
        return asyncio.run_coroutine_threadsafe(self.gateway.start(**where), self._loop).result(timeout=30)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.gateway.close(), self._loop).result(timeout=30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()
        self.gateway.log.check_written()
