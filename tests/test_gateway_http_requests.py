"""The LLM gateway's HTTP end toward the method: a burst of requests all logged, malformed or oversized requests
answered with a clear error, pipelining and Expect: 100-continue, and only the model endpoints let through."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import aiohttp
import pytest

from gateway_http_support import (  # noqa: F401 (serve)
    ANSWER,
    ASK,
    MODEL,
    Upstream,
    answer,
    log_lines,
    raw_exchange,
    serve_fixture,
    the_one_log_line,
)
from mt_eval.gateway import http as gateway_http
from mt_eval.gateway import http_server
from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute
from mt_eval.gateway.server import Gateway, GatewayThread


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
    # (refused on its Content-Length, the body neither awaited nor invited with a 100 Continue)
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", 413,
     "the request body (5,000 bytes, its Content-Length says) is over the gateway's limit"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n",
     413, "the request body (5,000 bytes, its Content-Length says) is over the gateway's limit"),
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
    (b'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 26\r\nConnection: close\r\n\r\n'
     b'{"model":"m","x":"\\ud800"}', 400,  # (it said "Input data was truncated")
     "the request body is not a JSON object (a lone surrogate escaped at byte 18 (\\ud800), which is not Unicode "
     "text; send the character itself)"),
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


HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(("request_bytes", "words"), [
    (HEAD + b"Content-Length: 100\r\n\r\n" + b'{"model": "', "the request's body stopped arriving after 11 bytes of "
     "the 100 its Content-Length announces, and nothing more came for 0.3 s: send the whole body"),
    (HEAD + b"Content-Type: application/js", "the request's head stopped arriving before the blank line that ends its "
     "headers, and nothing more came for 0.3 s"),
])
async def test_a_request_that_stops_arriving_half_way_gets_a_408_that_says_how_far_it_got(
        serve, monkeypatch, tmp_path: Path, request_bytes: bytes, words: str):
    """Before: the gateway waited for the rest and the method for an answer, until the connection was closed
    without one 75 s later."""
    monkeypatch.setattr(gateway_http, "STALL_S", 0.3)
    monkeypatch.setattr(http_server, "SWEEP_S", 0.05)
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        reply = await raw_exchange(url, request_bytes)
        await asyncio.sleep(0.05)
        assert upstream.requests == []
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), head
    error = json.loads(body)["error"]
    assert words in error["message"] and error["code"] == "request_timeout"
    [line] = log_lines(tmp_path)
    assert (line["status"], line["refused"], line["path"]) == (408, error["message"], "/v1/chat/completions")


async def test_a_slow_body_that_keeps_coming_and_an_idle_kept_alive_connection_are_not_cut(serve, monkeypatch):
    monkeypatch.setattr(gateway_http, "STALL_S", 0.3)
    monkeypatch.setattr(http_server, "SWEEP_S", 0.05)
    body = json.dumps(ASK).encode()
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for _ in range(2):  # the second after the connection sat idle for longer than a stall
                writer.write(HEAD + b"Content-Length: %d\r\n\r\n" % len(body))
                for start in range(0, len(body), len(body) // 6 + 1):  # a piece every 0.15 s: 0.9 s in all
                    await asyncio.sleep(0.15)
                    writer.write(body[start:start + len(body) // 6 + 1])
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                assert head.startswith(b"HTTP/1.1 200 "), head
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                assert json.loads(await reader.readexactly(length)) == ANSWER
                await asyncio.sleep(0.6)
        finally:
            writer.close()
        assert len(upstream.requests) == 2


async def _trickle(writer: asyncio.StreamWriter, data: bytes, every_s: float) -> None:
    """Send ``data`` a byte at a time, one every ``every_s``."""
    for i in range(len(data)):
        writer.write(data[i:i + 1])
        await asyncio.sleep(every_s)


async def test_a_head_that_trickles_in_gets_a_408_once_it_is_late_however_steadily_it_comes(
        serve, monkeypatch, tmp_path: Path):
    """Before: each byte reset the stall's clock, so a client that sent its head a byte every few seconds held the
    connection for as long as it liked (up to the 64 KiB of a head: days)."""
    monkeypatch.setattr(gateway_http, "STALL_S", 0.3)
    monkeypatch.setattr(gateway_http, "HEAD_S", 0.6, raising=False)
    monkeypatch.setattr(http_server, "SWEEP_S", 0.05)
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(HEAD)
        trickling = asyncio.create_task(_trickle(writer, b"X-Slow: " + b"a" * 2000 + b"\r\n\r\n", 0.05))
        try:
            reply = await asyncio.wait_for(reader.read(-1), 5)
        finally:
            trickling.cancel()
            writer.close()
        assert upstream.requests == []
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), head
    error = json.loads(body)["error"]
    assert error["code"] == "request_timeout"
    assert error["message"] == ("the request's head did not arrive in time: 0.6 s after it began, only 25 bytes of its "
                                "target and headers had come, and not the blank line that ends them: send the whole "
                                "head at once")  # (25: the target, and Host: x; not the header still coming)
    [line] = log_lines(tmp_path)
    assert (line["status"], line["refused"], line["path"]) == (408, error["message"], "/v1/chat/completions")


async def test_each_head_on_a_kept_alive_connection_has_its_own_deadline(serve, monkeypatch):
    """Three heads that each take half the deadline to come, one after the other on one connection: none is late."""
    monkeypatch.setattr(gateway_http, "STALL_S", 0.3)
    monkeypatch.setattr(gateway_http, "HEAD_S", 0.6, raising=False)
    monkeypatch.setattr(http_server, "SWEEP_S", 0.05)
    body = json.dumps(ASK).encode()
    request_head = HEAD + b"Content-Length: %d\r\n\r\n" % len(body)
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for _ in range(3):
                await _trickle(writer, request_head[:-8], 0.3 / len(request_head))  # (most of it over 0.3 s)
                writer.write(request_head[-8:] + body)
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                assert head.startswith(b"HTTP/1.1 200 "), head
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                assert json.loads(await reader.readexactly(length)) == ANSWER
        finally:
            writer.close()
        assert len(upstream.requests) == 3


async def test_a_model_off_the_allowlist_is_named_as_a_json_string_with_its_quotes_and_controls_escaped(
        serve, tmp_path: Path):
    """Before, the model was written raw between quotes: a quote in it ended the name early, a line break cut the
    message in two and ESC reached the terminal of whoever read the log."""
    model = 'gpt"4\n\x1b[2J\u202e'
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        body = json.dumps({**ASK, "model": model}).encode()
        reply = await raw_exchange(url, HEAD + b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    head, _, answered = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403 "), head
    said = 'model "gpt\\"4\\n\\u001b[2J\u202e" is not on this gateway\'s allowlist; allowed: '
    assert json.loads(answered)["error"]["message"].startswith(said)
    assert [line["refused"] for line in await the_one_log_line(tmp_path)] == [json.loads(answered)["error"]["message"]]
    assert upstream.requests == []


@pytest.mark.parametrize(("options", "words"), [(5, "the number 5"), ([{"include_usage": True}], "an array"),
                                                ("include_usage", 'the string "include_usage"')])
async def test_stream_options_that_are_not_an_object_are_refused_400_not_replaced(serve, tmp_path: Path, options,
                                                                                 words: str):
    """Before, a streamed chat completion's ``stream_options`` that was not an object was silently replaced by the
    ``{"include_usage": true}`` the gateway asks for: the upstream never saw what the method sent."""
    async with Upstream(answer) as upstream:
        _, url = await serve(upstream.base_url)
        async with aiohttp.ClientSession() as client, client.post(
                f"{url}/chat/completions", json={**ASK, "stream": True, "stream_options": options}) as response:
            error = (await response.json())["error"]
    assert response.status == 400 and error["code"] == "invalid_stream_options"
    assert error["message"] == (f'the request\'s "stream_options" is {words}, not an object: send an object, such as '
                                '{"include_usage": true}, or leave it out')
    assert [line["refused"] for line in await the_one_log_line(tmp_path)] == [error["message"]]
    assert upstream.requests == []
