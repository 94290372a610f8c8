"""Newline framing with a size limit that is enforced before a line is buffered.

A line longer than the limit is discarded up to its newline as it streams in; only its first bytes are
kept, so the request it answered can still be named (`id_in`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import msgspec

HEAD_BYTES = 256
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class Oversized:
    """A line over the limit: its first bytes and its full length."""

    head: bytes
    length: int


class LineSplitter:
    """Feed it chunks; it returns complete lines (without ``\\n`` or a trailing ``\\r``) and `Oversized`."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._discarding = False
        self._head = b""
        self._discarded = 0

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                self._discarded += len(data)
                return out
            out.append(Oversized(self._head, self._discarded + newline))
            self._discarding = False
            start = newline + 1
        while (newline := data.find(b"\n", start)) >= 0:
            if self._buffer:
                self._buffer += data[start:newline]
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = data[start:newline]
            if line.endswith(b"\r"):
                line = line[:-1]
            out.append(line if len(line) <= self.max_bytes else Oversized(line[:HEAD_BYTES], len(line)))
            start = newline + 1
        rest = data[start:]
        if len(self._buffer) + len(rest) > self.max_bytes:
            self._head = bytes(self._buffer[:HEAD_BYTES]) + rest[: max(0, HEAD_BYTES - len(self._buffer))]
            self._discarded = len(self._buffer) + len(rest)
            self._discarding = True
            self._buffer.clear()
        elif rest:
            self._buffer += rest
        return out

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line (for reporting a stream that ended mid-line)."""
        return self._discarded if self._discarding else len(self._buffer)


def id_in(head: bytes) -> int | str | None:
    """The JSON-RPC id at the start of a line that cannot be parsed whole, if it can be read."""
    match = _ID.search(head)
    if match is None:
        return None
    try:
        value = msgspec.json.decode(match.group(1))
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, int | str) else None
