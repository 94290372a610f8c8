"""The LLM gateway's HTTP ends, toward the upstream: kept-alive, pooled upstream connections (and a stale one
retried), timeouts, compressed answers, a method that hangs up mid-stream and a limit on exchanges at once.
Upstreams are loopback servers started by the tests (requests a method sends: test_gateway_http_requests.py)."""

from __future__ import annotations

import asyncio
import gzip
import json
import tracemalloc
import zlib
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from gateway_http_support import ANSWER, ASK, MODEL, Upstream, answer, log_lines, serve_fixture, the_one_log_line  # noqa: F401 (serve)
from mt_eval.gateway import server as gateway_server
from mt_eval.gateway.policy import ModelRoute


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


async def test_a_rate_limited_answer_tells_the_method_when_to_try_again(serve, tmp_path: Path):
    """An upstream's 429 says when to try again (Retry-After, and retry-after-ms, which OpenAI's clients read first):
    the method gets it, whole or streamed, and no other header of the upstream's."""
    async def rate_limited(request: web.Request) -> web.Response:
        return web.json_response({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
                                 status=429, headers={"Retry-After": "7", "retry-after-ms": "6500",
                                                      "Set-Cookie": "session=upstream", "X-Request-Id": "req-1"})

    async with Upstream(rate_limited) as upstream:
        _, url = await serve(upstream.base_url)
        async with aiohttp.ClientSession() as client:
            for ask in (ASK, {**ASK, "stream": True}):
                async with client.post(f"{url}/chat/completions", json=ask) as response:
                    await response.read()
                    assert response.status == 429
                    assert (response.headers.get("Retry-After"), response.headers.get("retry-after-ms")) == \
                        ("7", "6500")
                    assert "Set-Cookie" not in response.headers and "X-Request-Id" not in response.headers
    assert [line["status"] for line in log_lines(tmp_path)] == [429, 429]


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


HUNG_UP = "the method closed the connection before the answer was complete"


def _streaming(chunks: list[bytes], *, then_endless: bool = False, wait_s: float = 0.0,
               saw_the_end: asyncio.Event | None = None):
    """An upstream that streams ``chunks`` (waiting ``wait_s`` before the last), then, ``then_endless``, more content
    without end (and never its usage); ``saw_the_end`` is set when the gateway lets it go."""
    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for number, chunk in enumerate(chunks):
                if number == len(chunks) - 1:
                    await asyncio.sleep(wait_s)
                await response.write(chunk)
            while then_endless:
                await response.write(b'data: {"choices":[{"delta":{"content":"la"}}]}\n\n')
                await asyncio.sleep(0.02)
        except (ConnectionError, asyncio.CancelledError):
            if saw_the_end is not None:
                saw_the_end.set()
            raise
        return response
    return stream


async def _hang_up_after_one_line(url: str) -> bytes:
    async with aiohttp.ClientSession() as client:
        response = await client.post(f"{url}/chat/completions", json={**ASK, "stream": True})
        line = await response.content.readline()
        assert line.startswith(b"data:")
        response.close()  # the method hangs up
        return line


async def test_a_method_that_hangs_up_before_the_usage_chunk_has_its_tokens_counted(serve, tmp_path: Path):
    """Hanging up after the last content chunk, before the usage chunk: the answer was had whole, so the stream is
    read on (passed nowhere) to its usage, and its tokens count toward the budget."""
    content = b'data: {"choices":[{"delta":{"content":"Hola"}}]}\n\n'
    usage = b'data: {"choices":[],"usage":{"prompt_tokens":500.0,"completion_tokens":40}}\n\ndata: [DONE]\n\n'
    async with Upstream(_streaming([content, usage], wait_s=0.3)) as upstream:
        gateway, url = await serve(upstream.base_url, token_budget=100)
        assert await _hang_up_after_one_line(url) == content.removesuffix(b"\n")
        [line] = await the_one_log_line(tmp_path)
        assert line["error"] == HUNG_UP and line["status"] == 200 and "usage_unknown" not in line
        assert (line["prompt_tokens"], line["completion_tokens"]) == (500, 40)
        assert line["response_bytes"] == len(content)  # what the method received
        async with aiohttp.ClientSession() as client, client.post(f"{url}/chat/completions", json=ASK) as refused:
            assert refused.status == 403 and (await refused.json())["error"]["code"] == "token_budget_exhausted"
    facts = gateway.log.facts(None, 100)
    assert (facts.tokens, facts.budget_exceeded_by, facts.usage_unknown) == (540, 440, 0)
    assert facts.budget_words() == ("tokens 540 of a budget of 100: exceeded by 440 (requests in flight when it "
                                    "was reached were let finish)")


async def test_a_method_that_hangs_up_on_a_stream_whose_usage_never_comes_is_marked_and_the_upstream_let_go(
        serve, tmp_path: Path):
    """The stream read on for its usage is let go at the policy's timeout, and logged as of unknown usage."""
    upstream_saw_the_end = asyncio.Event()
    first = b'data: {"choices":[{"delta":{"content":"la"}}]}\n\n'
    async with Upstream(_streaming([first], then_endless=True, saw_the_end=upstream_saw_the_end)) as upstream:
        _, url = await serve(upstream.base_url, timeout_s=0.5)
        await _hang_up_after_one_line(url)
        await asyncio.wait_for(upstream_saw_the_end.wait(), 5)
    [line] = await the_one_log_line(tmp_path)
    assert line["stream"] is True and line["status"] == 200 and line["usage_unknown"] is True
    assert line["error"].startswith(f"{HUNG_UP}; reading on for its usage: ") and "within 0.5 s" in line["error"]
    assert (line["prompt_tokens"], line["completion_tokens"]) == (0, 0) and line["latency_s"] < 3
    assert line["response_bytes"] < 1000  # what the method received, not what was read on


async def test_a_stream_read_on_for_its_usage_does_not_hold_up_stopping(serve, tmp_path: Path):
    upstream_saw_the_end = asyncio.Event()
    first = b'data: {"choices":[{"delta":{"content":"la"}}]}\n\n'
    async with Upstream(_streaming([first], then_endless=True, saw_the_end=upstream_saw_the_end)) as upstream:
        gateway, url = await serve(upstream.base_url, timeout_s=60)
        await _hang_up_after_one_line(url)
        await asyncio.sleep(0.1)
        assert gateway.in_flight == 1  # read on for its usage
        await asyncio.wait_for(gateway.close(), 3)
        await asyncio.wait_for(upstream_saw_the_end.wait(), 5)
    [line] = log_lines(tmp_path)
    assert line["usage_unknown"] is True and "the gateway stopped" in line["error"]
    assert gateway.log.facts(None, None).budget_words() == "tokens 0; 1 request of unknown usage counted 0"


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
    assert line["error"] == HUNG_UP
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


async def test_a_base_url_s_query_goes_with_every_request_before_the_request_s_own(serve):
    """Before, it was dropped without a word (an Azure deployment's ?api-version= never reached it)."""
    async with Upstream(answer) as upstream:
        _, url = await serve(f"{upstream.base_url}?api-version=2024-02-01")
        async with aiohttp.ClientSession() as client:
            for asked in ("", "?user=7"):
                async with client.post(f"{url}/chat/completions{asked}", json=ASK) as response:
                    assert response.status == 200
    assert [seen["path"] for seen in upstream.requests] == ["/v1/chat/completions?api-version=2024-02-01",
                                                            "/v1/chat/completions?api-version=2024-02-01&user=7"]


async def test_an_upstream_that_answers_without_end_is_cut_off_at_the_answer_limit(serve, tmp_path: Path,
                                                                                  monkeypatch):
    """Before, the gateway held every byte of an answer (three times over, 1.2 GB for a 400 MB one): an upstream that
    answered without end took the memory of the gateway, and of the run it served."""
    from mt_eval.gateway import relay

    monkeypatch.setattr(relay, "MAX_ANSWER", 1024 * 1024)
    let_go = 0

    async def endless(request: web.Request) -> web.StreamResponse:
        nonlocal let_go
        streamed = (await request.json()).get("stream") is True
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream" if streamed else "application/json"})
        await response.prepare(request)
        try:
            while True:
                await response.write(b'data: {"choices":[{"delta":{"content":"la"}}]}\n\n' * 100)
        except (ConnectionError, asyncio.CancelledError):
            let_go += 1
            raise

    async with Upstream(endless) as upstream:
        _, url = await serve(upstream.base_url, timeout_s=5)  # (before, the answer ran until this)
        async with aiohttp.ClientSession() as client:
            async with client.post(f"{url}/chat/completions", json=ASK) as response:
                error = (await response.json())["error"]
            async with client.post(f"{url}/chat/completions", json={**ASK, "stream": True}) as streamed:
                try:
                    got = len(await streamed.read())
                except aiohttp.ClientPayloadError:  # (cut short: the connection closed mid-stream)
                    got = -1
        for _ in range(100):
            if let_go == 2:
                break
            await asyncio.sleep(0.05)
    assert response.status == 502 and error["code"] == "upstream_answer_too_large"
    assert "is over 1 MiB, the most the gateway holds of one answer; ask for less" in error["message"]
    assert streamed.status == 200 and got <= 1024 * 1024 and let_go == 2
    lines = log_lines(tmp_path)
    assert [line["status"] for line in lines] == [502, 200]
    assert all("is over 1 MiB" in line["error"] for line in lines)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_answer_is_expanded_a_piece_at_a_time_and_cut_off_at_the_answer_limit(
        serve, tmp_path: Path, monkeypatch, encoding: str):
    """Before, each piece that came was expanded whole: 64 KiB of gzip, 64 MiB of answer, held at once before the
    limit was weighed (a decompression bomb of a few MiB took gigabytes)."""
    from mt_eval.gateway import relay, upstream

    monkeypatch.setattr(relay, "MAX_ANSWER", 1024 * 1024)
    packer = zlib.compressobj(9, wbits=31 if encoding == "gzip" else 15)
    zeros = bytes(1024 * 1024)
    bomb = b"".join(packer.compress(zeros) for _ in range(64)) + packer.flush()  # 64 MiB in about 64 KiB
    pieces: list[int] = []
    on_body = relay.Relay.on_body

    def weighed(self: relay.Relay, data: bytes) -> None:
        pieces.append(len(data))
        on_body(self, data)

    monkeypatch.setattr(relay.Relay, "on_body", weighed)

    async def bombing(request: web.Request) -> web.Response:
        return web.Response(body=bomb, content_type="application/json", headers={"Content-Encoding": encoding})

    async with Upstream(bombing) as bomber:
        _, url = await serve(bomber.base_url)
        async with aiohttp.ClientSession() as client:
            tracemalloc.start()
            try:
                async with client.post(f"{url}/chat/completions", json=ASK) as response:
                    error = (await response.json())["error"]
                held = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    assert response.status == 502 and error["code"] == "upstream_answer_too_large"
    assert held < 16 * 1024 * 1024, f"{held / 2**20:.0f} MiB held at most"
    assert pieces and max(pieces) <= upstream.DECODED_PIECE
    assert sum(pieces) <= 1024 * 1024 + upstream.DECODED_PIECE  # (no more expanded than the limit and a piece)
    [line] = log_lines(tmp_path)
    assert line["status"] == 502 and "is over 1 MiB" in line["error"]
