"""Newline framing with a size limit that is enforced before a line is buffered.

A line longer than the limit is discarded up to its newline as it streams in; only its first bytes are
kept, so the request it answered can still be named (`id_in`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import msgspec

HEAD_BYTES = 256
_INTEGER = re.compile(rb"(-?\d+)\s*[,}]")


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
        lines = (data[start:] if start else data).split(b"\n")  # (one call: most chunks are one whole line)
        rest = lines.pop()
        if lines and self._buffer:
            self._buffer += lines[0]
            lines[0] = bytes(self._buffer)
            self._buffer.clear()
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            out.append(line if len(line) <= self.max_bytes else Oversized(line[:HEAD_BYTES], len(line)))
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
    """The top-level "id" of the JSON object at the start of a line that cannot be parsed whole (cut short, or not
    valid JSON further on), if it can be read: keys of nested objects (an entry's "id") are skipped, as Node's
    ``readMessageId`` skips them."""
    i = _skip_space(head, 0)
    if head[i:i + 1] != b"{":
        return None
    depth = 0
    while i < len(head):
        byte = head[i:i + 1]
        if byte == b'"':
            end = _string_end(head, i)
            if end == -1:
                return None
            after = _skip_space(head, end)
            if depth == 1 and head[after:after + 1] == b":" and head[i:end] == b'"id"':
                return _id_value(head, _skip_space(head, after + 1))
            i = end
            continue
        if byte in (b"{", b"["):
            depth += 1
        elif byte in (b"}", b"]"):
            depth -= 1
        i += 1
    return None


def _id_value(head: bytes, at: int) -> int | str | None:
    if head[at:at + 1] == b'"':
        end = _string_end(head, at)
        try:
            value = msgspec.json.decode(head[at:end]) if end != -1 else None
        except msgspec.DecodeError:
            return None
        return value if isinstance(value, str) else None
    number = _INTEGER.match(head, at)
    return int(number.group(1)) if number else None


def _skip_space(text: bytes, i: int) -> int:
    while text[i:i + 1] in (b" ", b"\t", b"\n", b"\r"):  # (past the end: b"", none of them)
        i += 1
    return i


def _string_end(text: bytes, i: int) -> int:
    """Index just past the JSON string that starts at ``text[i]`` (a quote); -1 when it does not end in ``text``."""
    j = i + 1
    while j < len(text):
        if text[j:j + 1] == b"\\":
            j += 1
        elif text[j:j + 1] == b'"':
            return j + 1
        j += 1
    return -1
