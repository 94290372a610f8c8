"""The LLM gateway's HTTP ends: what a method and an upstream meet on the wire — kept-alive, pooled upstream
connections (and a stale one retried), timeouts, compressed answers, a method that hangs up mid-stream, a
limit on exchanges at once, and malformed or oversized requests — and a log that loses nothing although
it is written in batches. Upstreams are loopback servers started by the tests."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mt_eval.gateway import http as gateway_http
from mt_eval.gateway import server as gateway_server
from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute
from mt_eval.gateway.server import Gateway, GatewayThread

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


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[tuple[Gateway, str]]]]:
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


async def test_upstream_connections_are_kept_alive_and_shared(serve, tmp_path: Path):
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=8)) as client:
            async def ask() -> int:
                async with client.post(f"{url}/chat/completions", json=ASK) as response:
                    assert await response.json() == ANSWER
                    return response.status
            for _ in range(20):
                assert await ask() == 200
            assert await asyncio.gather(*(ask() for _ in range(40))) == [200] * 40
    assert len(upstream.requests) == 60
    assert len(upstream.peers) <= 8  # kept alive: not a connection per request
    lines = log_lines(tmp_path)
    assert len(lines) == 60 and sorted(line["seq"] for line in lines) == list(range(1, 61))
    assert sum(line["prompt_tokens"] + line["completion_tokens"] for line in lines) == 60 * 11


async def test_a_connection_the_upstream_dropped_while_idle_is_retried_on_a_fresh_one(serve):
    """The first connection answers once, kept alive, then closes without answering the next request."""
    answered = 0
    body = json.dumps(ANSWER).encode()
    writers: list[asyncio.StreamWriter] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal answered
        writers.append(writer)
        first = answered == 0
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            await reader.readexactly(length)
            if first and answered:
                writer.close()  # as an upstream whose keep-alive ran out just as the request came
                return
            answered += 1
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(body), body))
            await writer.drain()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, url = await serve(f"http://127.0.0.1:{port}/v1")
    async with aiohttp.ClientSession() as client:
        for _ in range(2):
            async with client.post(f"{url}/chat/completions", json=ASK) as response:
                assert response.status == 200 and await response.json() == ANSWER
    server.close()
    for writer in writers:  # the second connection still waits for a request: closing the server leaves it open
        writer.close()
    assert answered == 2


async def test_a_slow_upstream_gets_a_504_that_names_the_policy_timeout(serve, tmp_path: Path):
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response(ANSWER)

    async with Upstream(slow) as upstream:
        _, url = await serve(upstream.base_url, timeout_s=0.3)
        async with aiohttp.ClientSession() as client, client.post(f"{url}/chat/completions", json=ASK) as response:
            error = (await response.json())["error"]
    assert response.status == 504 and error["code"] == "upstream_timeout"
    assert "did not answer within 0.3 s" in error["message"] and "timeout_s" in error["message"]
    [line] = log_lines(tmp_path)
    assert line["status"] == 504 and "0.3 s" in line["error"] and line["latency_s"] < 3


async def test_a_compressed_answer_is_decoded_and_its_usage_counted(serve, tmp_path: Path):
    async def gzipped(request: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(json.dumps(ANSWER).encode()), content_type="application/json",
                            headers={"Content-Encoding": "gzip"})

    async def brotli(request: web.Request) -> web.Response:
        return web.Response(body=b"\x8b\x02", content_type="application/json", headers={"Content-Encoding": "br"})

    async with Upstream(gzipped) as upstream, Upstream(brotli) as other:
        _, url = await serve(upstream.base_url, models=[ModelRoute(id=MODEL),
                                                        ModelRoute(id="br-2024", base_url=other.base_url)])
        async with aiohttp.ClientSession(auto_decompress=False) as client:
            async with client.post(f"{url}/chat/completions", json=ASK) as response:
                assert response.headers.get("Content-Encoding") is None
                assert json.loads(await response.read()) == ANSWER
            async with client.post(f"{url}/chat/completions", json={**ASK, "model": "br-2024"}) as refused:
                error = (await refused.json())["error"]
    assert upstream.requests[0]["headers"]["accept-encoding"] == "identity"
    assert refused.status == 502 and "br encoding" in error["message"]
    first = log_lines(tmp_path)[0]
    assert (first["prompt_tokens"], first["completion_tokens"]) == (9, 2)


async def test_a_method_that_hangs_up_mid_stream_is_logged_and_the_upstream_let_go(serve, tmp_path: Path):
    upstream_saw_the_end = asyncio.Event()

    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            while True:
                await response.write(b'data: {"choices":[{"delta":{"content":"la"}}]}\n\n')
                await asyncio.sleep(0.02)
        except (ConnectionError, asyncio.CancelledError):
            upstream_saw_the_end.set()
            raise

    async with Upstream(endless) as upstream:
        _, url = await serve(upstream.base_url)
        async with aiohttp.ClientSession() as client:
            response = await client.post(f"{url}/chat/completions", json={**ASK, "stream": True})
            assert (await response.content.readline()).startswith(b"data:")
            response.close()  # the method hangs up
        await asyncio.wait_for(upstream_saw_the_end.wait(), 5)
    [line] = await the_one_log_line(tmp_path)
    assert line["stream"] is True and line["status"] == 200
    assert line["error"] == "the method closed the connection before the answer was complete"


async def test_a_method_that_gives_up_before_the_answer_began_is_logged_and_the_upstream_let_go(serve,
                                                                                               tmp_path: Path):
    """A method's client that times out and closes its connection while the upstream still thinks: the gateway hears
    the close at once (not when it would write the answer), lets the upstream go, and logs the answer as not
    delivered, with no tokens counted."""
    upstream_saw_the_end = asyncio.Event()

    async def thinking(request: web.Request) -> web.Response:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:  # (aiohttp cancels the handler when its client goes)
            upstream_saw_the_end.set()
            raise
        return web.json_response(ANSWER)

    async with Upstream(thinking, handler_cancellation=True) as upstream:
        _, url = await serve(upstream.base_url)
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        body = json.dumps(ASK).encode()
        _, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        for _ in range(100):  # (until the upstream has the request)
            if upstream.requests:
                break
            await asyncio.sleep(0.02)
        writer.close()  # the method gives up
        await asyncio.wait_for(upstream_saw_the_end.wait(), 3)
    [line] = await the_one_log_line(tmp_path)
    assert line["error"] == "the method closed the connection before the answer was complete"
    assert line["status"] is None and (line["prompt_tokens"], line["completion_tokens"]) == (0, 0)
    assert line["latency_s"] < 3


async def test_the_upstream_sees_the_pinned_route_and_never_the_methods_credentials(serve):
    async with Upstream(answer) as upstream:
        route = ModelRoute(id=MODEL, upstream_model="served-name", api_key_env="STANDIN_KEY")
        _, url = await serve(upstream.base_url, models=[route])
        async with aiohttp.ClientSession() as client:
            body = json.dumps(ASK).encode()
            async with client.post(f"{url}/chat/completions?api-version=2024-06-01", data=body,
                                   headers={"Authorization": "Bearer sk-method", "OpenAI-Project": "p1"},
                                   skip_auto_headers=("Content-Type",)) as response:
                assert response.status == 200
    [seen] = upstream.requests
    assert seen["path"] == "/v1/chat/completions?api-version=2024-06-01"
    assert json.loads(seen["body"])["model"] == "served-name"
    assert seen["headers"]["authorization"] == "Bearer sk-gateway-only"
    assert seen["headers"]["content-type"] == "application/json" and seen["headers"]["openai-project"] == "p1"


async def test_beyond_the_exchange_limit_requests_wait_their_turn(serve, monkeypatch, tmp_path: Path):
    monkeypatch.setattr(gateway_server, "CONCURRENCY", 2)
    at_once = most = 0

    async def counted(request: web.Request) -> web.Response:
        nonlocal at_once, most
        at_once += 1
        most = max(most, at_once)
        await asyncio.sleep(0.05)
        at_once -= 1
        return web.json_response(ANSWER)

    async with Upstream(counted) as upstream:
        _, url = await serve(upstream.base_url)
        async with aiohttp.ClientSession() as client:
            async def ask() -> int:
                async with client.post(f"{url}/chat/completions", json=ASK) as response:
                    return response.status
            assert await asyncio.gather(*(ask() for _ in range(8))) == [200] * 8
    assert most == 2 and len(log_lines(tmp_path)) == 8


def test_a_gateway_thread_logs_every_request_of_a_burst(tmp_path: Path):
    """Lines are written a turn of the event loop at a time; stopping writes the rest, and the digest the
    card gets is that of the whole file."""
    async def burst(url: str) -> list[int]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=32)) as client:
            async def ask(i: int) -> int:
                payload = {**ASK, "messages": [{"role": "user", "content": f"Sentence {i}."}]}
                async with client.post(f"{url}/chat/completions", json=payload) as response:
                    await response.read()
                    return response.status
            return await asyncio.gather(*(ask(i) for i in range(300)))

    async def main() -> None:
        async with Upstream(answer) as upstream:
            log = AuditLog(tmp_path / "gateway.jsonl")
            thread = GatewayThread(Gateway(GatewayPolicy(models=[ModelRoute(id=MODEL)], base_url=upstream.base_url),
                                           log))
            url = await asyncio.to_thread(thread.start)
            assert await burst(url) == [200] * 300
            await asyncio.to_thread(thread.stop)
            facts = log.facts(None, None)
            assert facts.requests == 300 and facts.tokens == 300 * 11
            assert facts.log_sha256 == hashlib.sha256((tmp_path / "gateway.jsonl").read_bytes()).hexdigest()

    asyncio.run(main())
    lines = log_lines(tmp_path)
    assert len(lines) == 300 and len({line["request_sha256"] for line in lines}) == 300


@pytest.mark.parametrize(("request_bytes", "status", "words"), [
    (b"NOT HTTP AT ALL\r\n\r\n", 400, "not valid HTTP/1.1"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", 431,
     "headers are over 64 KiB"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b"{" * 5000, 413,
     "over the gateway's limit"),
    (b"DELETE /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, "is not a model endpoint"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\nConnection: close\r\n\r\nnot json",
     400, "the request body is not a JSON object (JSON is malformed"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]",
     400, "the request body is not a JSON object (Expected `object`, got `array`)"),
    (b'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
     400, 'the request has no "model"'),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
     400, "the request body is not a JSON object (the body is empty)"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4006\r\nConnection: close\r\n\r\n"
     + b'{"x":' + b"[" * 2000 + b"]" * 2000 + b"}", 400,
     "the request body is not a JSON object (arrays and objects nested too deep to read)"),
    (b'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"model":5}',
     400, 'the request\'s "model" is the number 5, not a string: name one of the allowed models'),
])
async def test_what_cannot_be_read_gets_a_clear_http_error_and_is_logged(serve, monkeypatch, tmp_path: Path,
                                                                         request_bytes: bytes, status: int, words: str):
    monkeypatch.setattr(gateway_http, "MAX_BODY", 4096)
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        reply = await raw_exchange(url, request_bytes)
        await asyncio.sleep(0.05)  # the log is written after the loop's turn
        assert upstream.requests == []
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), head
    message = json.loads(body)["error"]["message"]
    assert words in message
    [line] = log_lines(tmp_path)
    assert (line["status"], line["refused"]) == (status, message)


async def test_pipelined_http10_and_expect_continue_requests_are_answered_as_http_says(serve):
    body = json.dumps(ASK).encode()
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        pipelined = await raw_exchange(url, request + request + b"GET /v1/models HTTP/1.1\r\nHost: x\r\n"
                                       b"Connection: close\r\n\r\n")
        old = await raw_exchange(url, b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(body), body))
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body))
        interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        writer.write(body)
        final = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        writer.close()
    assert pipelined.count(b"HTTP/1.1 200 OK") == 3 and pipelined.rstrip().endswith(b'"owned_by":"gateway"}]}')
    assert pipelined.index(b'"Hola."') < pipelined.index(b'"object":"list"')  # in the order asked
    assert old.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in old and old.endswith(json.dumps(
        ANSWER, separators=(", ", ": ")).encode())
    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n" and final.startswith(b"HTTP/1.1 200 OK")


@pytest.mark.parametrize("path", ["/v1/files", "/v1/../admin/keys", "/v1/chat/completions/../../../admin",
                                  "/v1/chat%2Fcompletions", "/v1/chat/completions/", "/v2/chat/completions", "/v1/"])
async def test_only_the_model_endpoints_reach_the_upstream_and_the_rest_is_logged_as_refused(
        serve, tmp_path: Path, path: str):
    """The gateway sends its API key upstream: another API, or a path that climbs out of /v1, never gets it."""
    body = json.dumps(ASK).encode()
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url, api_key_env="STANDIN_KEY")
        reply = await raw_exchange(url, b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close"
                                   b"\r\n\r\n%s" % (path.encode(), len(body), body))
        served = await raw_exchange(url, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
                                    b"Connection: close\r\n\r\n%s" % (len(body), body))
    head, _, answered = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404 "), head
    assert json.loads(answered)["error"]["message"].startswith(f"POST {path} is not a model endpoint of this gateway")
    assert served.startswith(b"HTTP/1.1 200 ")
    assert [request["path"] for request in upstream.requests] == ["/v1/chat/completions"]
    refused = [line for line in log_lines(tmp_path) if line["refused"]]
    assert [(line["path"], line["status"]) for line in refused] == [(path, 404)]
