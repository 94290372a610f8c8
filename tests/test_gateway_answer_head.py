"""The head of an upstream's answer (status line and headers) is read up to a limit, as the head of a method's request
is: an upstream whose head never ends gets the method a clear 502 at once, not a gateway growing until its timeout."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest

from gateway_http_support import ASK, log_lines, serve_fixture  # noqa: F401 (serve)
from mt_eval.gateway.http import MAX_HEAD

ENDLESS_HEADS = {
    "a header line that never ends": (b"X-Endless: ", b"a" * 4096),
    "header lines without end": (b"", b"X-More: aaaaaaaaaaaaaaaa\r\n" * 256),
}


@pytest.mark.parametrize("kind", ENDLESS_HEADS)
async def test_an_answer_whose_head_never_ends_is_a_clear_502_and_the_upstream_is_let_go(serve, tmp_path: Path,
                                                                                        kind: str):
    first, again = ENDLESS_HEADS[kind]
    sent_after_the_limit = 0
    let_go = asyncio.Event()

    async def endless_head(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent_after_the_limit
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + first)
        sent = 0
        try:
            while True:  # (until the gateway closes the connection)
                writer.write(again)
                await writer.drain()
                sent += len(again)
                sent_after_the_limit = max(0, sent - MAX_HEAD)
                await asyncio.sleep(0)
        except ConnectionError:
            let_go.set()
        finally:
            writer.close()

    upstream = await asyncio.start_server(endless_head, "127.0.0.1", 0)
    port = upstream.sockets[0].getsockname()[1]
    try:
        _, url = await serve(f"http://127.0.0.1:{port}/v1", timeout_s=10)  # (before, it grew until this)
        began = time.monotonic()
        async with aiohttp.ClientSession() as client, client.post(f"{url}/chat/completions", json=ASK) as response:
            error = (await response.json())["error"]
        answered_in = time.monotonic() - began
        await asyncio.wait_for(let_go.wait(), 10)
    finally:
        upstream.close()
    assert response.status == 502 and error["code"] == "upstream_answer_too_large", error
    assert "the head of its answer (status line and headers) is over 64 KiB" in error["message"]
    assert answered_in < 5 and sent_after_the_limit < 8 * MAX_HEAD  # cut off at the limit, not at the timeout
    [line] = log_lines(tmp_path)
    assert line["status"] == 502 and "is over 64 KiB" in line["error"]
