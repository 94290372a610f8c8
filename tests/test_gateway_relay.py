"""A relayed stream, piece by piece: the usage chunk the gateway asked for (and the method did not) is read for the
log and not passed on, wherever the upstream's writes happen to cut the stream."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

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
