"""The LLM gateway: an OpenAI-compatible proxy that forwards only allowlisted, pinned models, within a
token budget, and logs every exchange (`mt_eval.gateway.audit`).

Built on aiohttp, whose one package serves both ends (an asyncio HTTP server with a C parser, and a
pooled client for the upstream), so the gateway runs inside the harness's own event loop beside the
bridge host, on a Unix socket (a sandbox's only way out) or a TCP port (``mt-eval gateway``).

A refusal is an HTTP error in OpenAI's shape — ``{"error": {"message", "type", "code"}}`` — that tells the
method what it asked for and what it may use: 403 ``model_not_allowed``, 403 ``token_budget_exhausted``,
404 for paths that are not model endpoints, 502 when the upstream cannot be reached.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import msgspec
from aiohttp import web
from anyio.from_thread import BlockingPortal, start_blocking_portal

from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.policy import GatewayPolicy

MAX_BODY = 32 * 1024 * 1024
FORWARDED_HEADERS = ("Content-Type", "Accept", "OpenAI-Organization", "OpenAI-Project")


def _error(status: int, message: str, code: str, kind: str = "invalid_request_error") -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "code": code}}, status=status)


def usage_of(body: bytes, *, event_stream: bool = False) -> tuple[int, int]:
    """(prompt, completion) tokens reported in a response body: JSON, or the last usage of an SSE stream."""
    prompt = completion = 0
    chunks = [body] if not event_stream else \
        [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:") and b'"usage"' in line]
    for chunk in chunks:
        try:
            usage = msgspec.json.decode(chunk).get("usage")
        except (msgspec.DecodeError, AttributeError):
            continue
        if isinstance(usage, dict):
            prompt = int(usage.get("prompt_tokens") or usage.get("input_tokens") or prompt)
            completion = int(usage.get("completion_tokens") or usage.get("output_tokens") or completion)
    return prompt, completion


class Gateway:
    """One gateway: ``await start(...)``, then ``await close()``; totals are in ``log``."""

    def __init__(self, policy: GatewayPolicy, log: AuditLog, *, environ: Mapping[str, str] | None = None) -> None:
        self.policy = policy
        self.log = log
        self.environ = dict(os.environ if environ is None else environ)
        self.allowed = ", ".join(r.id for r in policy.models)
        self._runner: web.AppRunner | None = None
        self._client: aiohttp.ClientSession | None = None
        self.url: str | None = None

    def application(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/{endpoint:.+}", self.forward)
        app.router.add_route("*", "/{anything:.*}", self.not_found)
        return app

    async def start(self, *, unix: Path | None = None, host: str = "127.0.0.1", port: int = 0,
                    sock: socket.socket | None = None) -> str:
        """Listen on the Unix socket ``unix``, on the listening socket ``sock``, else on ``host:port``; returns
        the base URL (``…/v1``, or ``unix:PATH``)."""
        self._client = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.policy.timeout_s),
            connector=aiohttp.TCPConnector(limit=256, ttl_dns_cache=300), auto_decompress=True)
        self._runner = web.AppRunner(self.application(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site: web.BaseSite
        if unix is not None:
            site = web.UnixSite(self._runner, str(unix))
            await site.start()
            os.chmod(unix, 0o666)  # the sandbox's user may differ from ours
            self.url = f"unix:{unix}"
        elif sock is not None:
            site = web.SockSite(self._runner, sock)
            await site.start()
            bound = sock.getsockname()
            self.url = f"http://{bound[0]}:{bound[1]}/v1"
        else:
            site = web.TCPSite(self._runner, host, port)
            await site.start()
            bound = self._runner.addresses[0]
            self.url = f"http://{bound[0]}:{bound[1]}/v1"
        return self.url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._client is not None:
            await self._client.close()
            self._client = None
        self.log.close()

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": r.id, "object": "model", "owned_by": "gateway"}
                                                             for r in self.policy.models]})

    async def not_found(self, request: web.Request) -> web.Response:
        return _error(404, f"{request.method} {request.path} is not a model endpoint of this gateway (it serves "
                      "POST /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses and GET "
                      "/v1/models)", "not_found")

    def refuse(self, request: web.Request, body: bytes, model: str | None, status: int, message: str, code: str,
               started: float) -> web.Response:
        response = _error(status, message, code)
        self.log.write({"path": request.path, "model": model, "status": status, "refused": message,
                        "request_sha256": hashlib.sha256(body).hexdigest(), "request_bytes": len(body),
                        "response_sha256": hashlib.sha256(response.body).hexdigest(),  # type: ignore[arg-type]
                        "response_bytes": len(response.body), "prompt_tokens": 0,  # type: ignore[arg-type]
                        "completion_tokens": 0, "latency_s": round(time.perf_counter() - started, 6)})
        return response

    async def forward(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        body = await request.read()
        try:
            payload = msgspec.json.decode(body)
        except msgspec.DecodeError:
            payload = None
        model = payload.get("model") if isinstance(payload, dict) else None
        if not isinstance(model, str):
            return self.refuse(request, body, None, 400, 'the request has no "model": name one of the allowed '
                               f"models ({self.allowed})", "model_missing", started)
        route = self.policy.route(model)
        if route is None:
            return self.refuse(request, body, model, 403, f'model "{model}" is not on this gateway\'s allowlist; '
                               f"allowed: {self.allowed}", "model_not_allowed", started)
        budget = self.policy.token_budget
        if budget is not None and self.log.tokens >= budget:
            return self.refuse(request, body, model, 403, f"the run's token budget of {budget} is spent "
                               f"({self.log.tokens} tokens used)", "token_budget_exhausted", started)
        base_url, key_variable = self.policy.upstream(route)
        headers = {name: request.headers[name] for name in FORWARDED_HEADERS if name in request.headers}
        headers["Accept-Encoding"] = "identity"
        if key_variable and self.environ.get(key_variable):
            headers["Authorization"] = f"Bearer {self.environ[key_variable]}"
        upstream_body = body
        if route.upstream_model and isinstance(payload, dict):
            upstream_body = msgspec.json.encode({**payload, "model": route.upstream_model})
        stream = isinstance(payload, dict) and payload.get("stream") is True
        return await self._relay(request, f"{base_url}/{request.match_info['endpoint']}", headers, upstream_body,
                                 body, model, stream, started)

    async def _relay(self, request: web.Request, url: str, headers: dict[str, str], upstream_body: bytes,
                     body: bytes, model: str, stream: bool, started: float) -> web.StreamResponse:
        assert self._client is not None
        response_hash = hashlib.sha256()
        received = bytearray()
        record: dict[str, Any] = {"path": request.path, "model": model, "refused": None, "stream": stream,
                                  "request_sha256": hashlib.sha256(body).hexdigest(), "request_bytes": len(body)}
        out: web.StreamResponse | None = None
        content_type = "application/json"
        try:
            async with self._client.post(url, data=upstream_body, headers=headers) as upstream:
                record["status"] = upstream.status
                content_type = upstream.headers.get("Content-Type", "application/json")
                if stream:
                    out = web.StreamResponse(status=upstream.status, headers={"Content-Type": content_type})
                    await out.prepare(request)
                    async for chunk in upstream.content.iter_any():
                        response_hash.update(chunk)
                        received += chunk
                        await out.write(chunk)
                    await out.write_eof()
                else:
                    data = await upstream.read()
                    response_hash.update(data)
                    received += data
                    out = web.Response(body=data, status=upstream.status, headers={"Content-Type": content_type})
        except (aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
            message = f"the upstream serving {model} cannot be reached: {type(exc).__name__}: {exc}"
            record["error"] = message
            if out is None or not out.prepared:  # nothing sent yet: the method gets a clear error
                out = _error(502, message, "upstream_unreachable", "api_error")
                record["status"] = 502
                response_hash.update(out.body)  # type: ignore[arg-type]
        event_stream = content_type.startswith("text/event-stream")
        prompt, completion = usage_of(bytes(received), event_stream=event_stream) if record["status"] < 400 \
            else (0, 0)
        record.update(response_sha256=response_hash.hexdigest(), response_bytes=len(received),
                      prompt_tokens=prompt, completion_tokens=completion,
                      latency_s=round(time.perf_counter() - started, 6))
        if self.policy.log_bodies:
            record.update(request_body=body.decode("utf-8", "replace"),
                          response_body=bytes(received).decode("utf-8", "replace"))
        self.log.write(record)
        assert out is not None
        return out


class GatewayThread:
    """A gateway served from its own thread and event loop (an anyio blocking portal), so nothing done on the
    harness's loop (an in-process method that blocks it, scoring, hooks) can stall the method's own model calls."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._portal: contextlib.AbstractContextManager[BlockingPortal] | None = None
        self._running: BlockingPortal | None = None

    def start(self, **where: Any) -> str:
        """Start serving (``where``: as `Gateway.start`); returns its URL."""
        self._portal = start_blocking_portal()
        self._running = self._portal.__enter__()

        async def start() -> str:
            with anyio.fail_after(30):
                return await self.gateway.start(**where)

        return self._running.call(start)

    def stop(self) -> None:
        if self._running is None or self._portal is None:
            return
        running, portal, self._running, self._portal = self._running, self._portal, None, None
        try:
            running.call(self.gateway.close)
        finally:
            portal.__exit__(None, None, None)
