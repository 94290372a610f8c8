"""A relayed stream, piece by piece: the usage chunk the gateway asked for (and the method did not) is read for the
log and not passed on, wherever the upstream's writes happen to cut the stream; and an answer that reports no usage
is marked as of unknown usage in the log and on the card."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import aiohttp
from aiohttp import web

from gateway_http_support import ANSWER, ASK, Upstream, log_lines, serve_fixture  # noqa: F401 (serve)
from mt_eval.gateway.relay import Relay, usage_of

STREAM = (b'data: {"choices":[{"delta":{"content":"Ho"}}]}\n\n'
          b'data: {"choices":[{"delta":{"content":"la"}}],"usage":null}\n\n'
          b'data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":6}}\n\n'
          b"data: [DONE]\n\n")
PASSED_ON = STREAM.replace(b'data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":6}}\n\n', b"")


class Client:
    listener = None
    writing_paused = False
    started = True

    def __init__(self) -> None:
        self.got = b""

    def start_stream(self, status: int, content_type: bytes, headers: bytes = b"") -> None:
        pass

    def write_chunk(self, data: bytes) -> None:
        self.got += data

    def end_stream(self) -> None:
        pass


def relayed(pieces: list[bytes], *, hide_usage: bool) -> tuple[bytes, dict]:
    logged: list[dict] = []
    gateway = SimpleNamespace(policy=SimpleNamespace(log_bodies=False), finished=lambda r: logged.append(r.record))
    client = Client()
    relay = Relay(gateway, client, {"stream": True}, b"{}", 0.0, hide_usage=hide_usage)  # type: ignore[arg-type]
    relay.on_head(200, {b"content-type": b"text/event-stream"})
    for piece in pieces:
        relay.on_body(piece)
    relay.on_done()
    return client.got, logged[0]


def test_the_usage_chunk_is_kept_from_the_method_however_the_stream_is_cut():
    for size in (1, 3, 7, 50, len(STREAM)):
        got, record = relayed([STREAM[i:i + size] for i in range(0, len(STREAM), size)], hide_usage=True)
        assert got == PASSED_ON, size
        assert (record["prompt_tokens"], record["completion_tokens"]) == (4, 6)
        assert record["response_sha256"] == hashlib.sha256(PASSED_ON).hexdigest()
        assert record["response_bytes"] == len(PASSED_ON)


def test_a_stream_whose_method_asked_for_its_usage_is_passed_on_whole():
    got, record = relayed([STREAM[:10], STREAM[10:]], hide_usage=False)
    assert got == STREAM and record["response_bytes"] == len(STREAM)
    unended = b'data: {"choices":[{"delta":{"content":"Ho"}}]}\n\ndata: {"choi'  # (an event the stream did not end)
    assert relayed([unended], hide_usage=True)[0] == unended


def test_token_counts_written_as_integral_floats_count_and_other_numbers_do_not():
    def counted(prompt: object) -> int:
        return usage_of(json.dumps({"usage": {"prompt_tokens": prompt, "completion_tokens": 2.0}}).encode())[0]

    assert usage_of(b'{"usage": {"prompt_tokens": 500.0, "completion_tokens": 2.0}}') == (500, 2)
    refused = (-3.0, -3, 2.5, float("nan"), True, "5", 0.0)
    assert [counted(v) for v in (500, 7.0, *refused)] == [500, 7, 0, 0, 0, 0, 0, 0, 0]


async def test_a_whole_answer_that_reports_no_usage_is_marked_and_counted_on_the_card(serve, tmp_path: Path):
    """Its tokens count 0, so a budget counts nothing for it: the log line says so, and the card's facts count it;
    an answer with usage, an upstream error and a refusal are not marked."""
    content = {"choices": [{"message": {"role": "assistant", "content": "Hola."}}]}

    async def upstream_answer(request: web.Request) -> web.StreamResponse:
        ask = await request.json()
        kind = ask["messages"][0]["content"]
        if kind == "error":
            return web.json_response({"error": {"message": "overloaded"}}, status=500)
        if kind == "with usage":
            return web.json_response(ANSWER)
        if not ask.get("stream"):
            return web.json_response(content)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)  # (no usage chunk, though the gateway asked for one)
        await response.write(b'data: {"choices":[{"delta":{"content":"Hola."}}]}\n\ndata: [DONE]\n\n')
        return response

    def asking(kind: str, **more: object) -> dict:
        return {**ASK, "messages": [{"role": "user", "content": kind}], **more}

    async with Upstream(upstream_answer) as upstream:
        gateway, url = await serve(upstream.base_url)
        async with aiohttp.ClientSession() as client:
            for ask in (asking("no usage"), asking("no usage", stream=True), asking("with usage"), asking("error"),
                        {**ASK, "model": "other-2024"}):
                async with client.post(f"{url}/chat/completions", json=ask) as response:
                    await response.read()
    lines = log_lines(tmp_path)
    assert [(line["status"], line.get("stream"), line.get("usage_unknown")) for line in lines] == \
        [(200, False, True), (200, True, True), (200, False, None), (500, False, None), (403, None, None)]
    assert (lines[2]["prompt_tokens"], lines[2]["completion_tokens"]) == (9, 2)
    facts = gateway.log.facts(None, None)
    assert (facts.tokens, facts.usage_unknown) == (11, 2)
    assert facts.budget_words() == "tokens 11; 2 requests of unknown usage counted 0"
