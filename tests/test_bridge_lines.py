"""Newline framing: chunk boundaries, CRLF, and the size limit enforced before buffering."""

from __future__ import annotations

import pytest

from mt_eval.bridge.lines import LineSplitter, Oversized, id_in


def feed_all(splitter: LineSplitter, chunks: list[bytes]) -> list[bytes | Oversized]:
    return [item for chunk in chunks for item in splitter.feed(chunk)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_lines_survive_any_chunking(size: int):
    data = b'{"a": 1}\n{"b": "x\\ny"}\r\n\n{"c": 3}\n'
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    assert feed_all(LineSplitter(1024), chunks) == [b'{"a": 1}', b'{"b": "x\\ny"}', b"", b'{"c": 3}']


def test_an_oversized_line_is_discarded_as_it_streams_and_keeps_its_head():
    splitter = LineSplitter(100)
    head = b'{"jsonrpc": "2.0", "id": 42, "result": "'
    out = feed_all(splitter, [head, b"z" * 500, b"z" * 500, b'"}\n{"ok": 1}\n'])
    assert splitter.pending == 0
    [big, ok] = out
    assert isinstance(big, Oversized)
    assert big.length == len(head) + 1000 + 2
    assert id_in(big.head) == 42
    assert ok == b'{"ok": 1}'


def test_memory_stays_bounded_while_discarding():
    splitter = LineSplitter(64)
    for _ in range(1000):
        assert splitter.feed(b"x" * 4096) == []
    assert splitter._buffer == bytearray()
    [item] = splitter.feed(b"\n")
    assert isinstance(item, Oversized) and item.length == 4096 * 1000


def test_a_chunk_of_whole_lines_after_a_partial_one_keeps_each_line_and_the_limit():
    splitter = LineSplitter(16)
    assert splitter.feed(b'{"a":') == []
    [first, big, crlf, empty] = splitter.feed(b'1}\n' + b"y" * 300 + b'\n{"b":2}\r\n\n{"c"')
    assert (first, crlf, empty) == (b'{"a":1}', b'{"b":2}', b"")
    assert isinstance(big, Oversized) and (big.head, big.length) == (b"y" * 256, 300)
    assert splitter.pending == 4 and splitter.feed(b":3}\n") == [b'{"c":3}']


@pytest.mark.parametrize(("head", "expected"), [
    (b'{"jsonrpc":"2.0","id":7,"result":', 7),
    (b'{"id": "req-\\"9\\"", "result"', 'req-"9"'),
    (b'{"result": [1, 2', None),
    (b'{"id": null}', None),
    # only the message's own id: not an entry's, and not one in a line that is no JSON object
    (b'{"params":{"entries":[{"id":"a","source":"x', None),
    (b'{"params":{"entries":[{"id":"a"}]},"jsonrpc":"2.0","id":"big","method":"translate"', "big"),
    (b'{"note": "}{\\"id\\": 3", "id": 4, "result"', 4),
    (b'debug: sending {"id": 2} upstream', None),
    (b'{"id": 1.5, "result"', None),
])
def test_request_ids_can_be_read_from_the_start_of_a_broken_line(head: bytes, expected):
    assert id_in(head) == expected
