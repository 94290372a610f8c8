"""What the gateway's HTTP tests share: a loopback upstream, a gateway in front of it (the ``serve`` fixture), and
ways to read its log and to send raw bytes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute
from mt_eval.gateway.server import Gateway

MODEL = "standin-2024-06-01"
ANSWER = {"choices": [{"message": {"role": "assistant", "content": "Hola."}}],
          "usage": {"prompt_tokens": 9, "completion_tokens": 2}}
ASK = {"model": MODEL, "messages": [{"role": "user", "content": "Hello."}]}


class Upstream:
    """An aiohttp upstream on a free port, counting the connections it was asked on."""

    def __init__(self, handler: Callable[[web.Request], Awaitable[web.StreamResponse]], **runner: Any) -> None:
        self.handler = handler
        self.requests: list[dict[str, Any]] = []
        self.peers: set[Any] = set()
        self.runner_options = runner

    async def __aenter__(self) -> Upstream:
        async def record(request: web.Request) -> web.StreamResponse:
            self.peers.add(request.transport.get_extra_info("peername") if request.transport else None)
            headers = {name.lower(): value for name, value in request.headers.items()}
            self.requests.append({"path": request.path_qs, "headers": headers, "body": await request.read()})
            return await self.handler(request)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", record)
        self.runner = web.AppRunner(app, access_log=None, **self.runner_options)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()


async def answer(request: web.Request) -> web.Response:
    return web.json_response(ANSWER)


@pytest.fixture(name="serve")
async def serve_fixture(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[tuple[Gateway, str]]]]:
    """Start a gateway for a base URL (policy fields as keywords); closed after the test."""
    started: list[Gateway] = []

    async def start(base_url: str, **policy: Any) -> tuple[Gateway, str]:
        routes = policy.pop("models", [ModelRoute(id=MODEL)])
        gateway = Gateway(GatewayPolicy(models=routes, base_url=base_url, **policy),
                          AuditLog(tmp_path / "gateway.jsonl"), environ={"STANDIN_KEY": "sk-gateway-only"})
        started.append(gateway)
        return gateway, await gateway.start()

    yield start
    for gateway in started:
        await gateway.close()


def log_lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "gateway.jsonl").read_text().splitlines()]


async def the_one_log_line(tmp_path: Path) -> list[dict[str, Any]]:
    """The log's lines once there is one (it is written in batches, at the end of a turn of the gateway's loop)."""
    for _ in range(100):
        if (tmp_path / "gateway.jsonl").exists() and log_lines(tmp_path):
            break
        await asyncio.sleep(0.02)
    return log_lines(tmp_path)


async def raw_exchange(url: str, data: bytes, *, read_until_close: bool = True) -> bytes:
    """Send bytes to the gateway's port and read what comes back until it closes the connection."""
    host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(-1) if read_until_close else reader.read(65536), 10)
    finally:
        writer.close()
