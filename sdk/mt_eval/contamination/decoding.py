"""Reading bytes as text: limits, encodings, text in blocks, JSON string literals, text inside binaries.

Everything streams in blocks of a mebibyte, so a file's size never decides the memory used.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

BLOCK = 1 << 20
HEAD = 1 << 16
MIN_BINARY_RUN = 8


class TooLarge(Exception):
    """More bytes than the limit allows were read."""


class PrefixedReader(io.RawIOBase):
    """A readable stream: bytes already read (``prefix``), then the rest of ``rest``."""

    def __init__(self, prefix: bytes, rest: IO[bytes] | io.RawIOBase | None) -> None:
        self._pending = memoryview(prefix)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def _more(self, size: int) -> bytes:
        return (self._rest.read(size) or b"") if self._rest is not None else b""

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._pending:
            size = min(len(buffer), len(self._pending))
            buffer[:size] = self._pending[:size]
            self._pending = self._pending[size:]
            return size
        data = self._more(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class LimitedReader(PrefixedReader):
    """A readable stream that fails with `TooLarge` past ``limit`` bytes and keeps its first bytes (``head``)
    to tell what it holds; ``on_read`` is told the bytes read so far after each read (a block at most)."""

    def __init__(self, raw: IO[bytes], limit: int, shared: ByteBudget | None = None,
                 on_read: Callable[[int], None] | None = None) -> None:
        self._raw = raw
        self._limit = limit
        self._shared = shared
        self.on_read = on_read
        self.count = 0
        parts: list[bytes] = []
        while (got := sum(map(len, parts))) < HEAD and (data := self._more(HEAD - got)):
            parts.append(data)
        self.head = b"".join(parts)
        super().__init__(self.head, None)

    def _more(self, size: int) -> bytes:
        data = self._raw.read(size) or b""
        self.count += len(data)
        if self._shared is not None:
            self._shared.spend(len(data))
        if self.count > self._limit:
            raise TooLarge(f"more than {self._limit:,} bytes")
        if self.on_read is not None:
            self.on_read(self.count)
        return data

    @property
    def head_is_all(self) -> bool:
        return len(self.head) < HEAD


class ByteBudget:
    """Decompressed bytes left for one archive (a guard against archive bombs)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0

    def spend(self, count: int) -> None:
        self.spent += count
        if self.spent > self.limit:
            raise TooLarge(f"more than {self.limit:,} bytes decompressed from one archive")


@dataclass
class Sniffed:
    """What the first bytes say: text in ``encoding``, or binary; ``note`` explains anything unusual."""

    encoding: str | None
    note: str | None = None
    guessed: bool = False


def sniff(head: bytes, complete: bool) -> Sniffed:
    """Text or binary, and which encoding, from a file's first bytes (``complete``: that is all of it)."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
                      (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
                      (codecs.BOM_UTF16_BE, "utf-16")):
        if head.startswith(bom):
            return Sniffed(name)
    if b"\0" in head:
        quarter = max(1, len(head) // 4)
        zeros = [head[i::4].count(0) / quarter for i in range(4)]
        if min(zeros[1:]) > 0.9 and zeros[0] < 0.05:
            return Sniffed("utf-32-le", "UTF-32 without a byte-order mark", guessed=True)
        if min(zeros[:3]) > 0.9 and zeros[3] < 0.05:
            return Sniffed("utf-32-be", "UTF-32 without a byte-order mark", guessed=True)
        half = max(1, len(head) // 2)
        even, odd = head[0::2].count(0) / half, head[1::2].count(0) / half
        if odd > 0.4 and even < 0.05:
            return Sniffed("utf-16-le", "UTF-16 without a byte-order mark", guessed=True)
        if even > 0.4 and odd < 0.05:
            return Sniffed("utf-16-be", "UTF-16 without a byte-order mark", guessed=True)
        return Sniffed(None)
    for cut in range(4 if not complete else 1):
        try:
            head[:len(head) - cut].decode("utf-8")
            return Sniffed("utf-8")
        except UnicodeDecodeError:
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(head).best()
    if best is None:
        return Sniffed(None, "not UTF-8 and no known encoding fits")
    return Sniffed(best.encoding, f"not UTF-8: read as {best.encoding} (detected)", guessed=True)


class TextBlocks:
    """``(first line, text)`` blocks of a text stream, cut at line ends (an overlong line at a space).

    ``replaced`` counts characters that could not be decoded (replaced by U+FFFD). In a file read as UTF-8, bytes
    that are not UTF-8 (a file of mixed encodings, whose first 64 KiB are UTF-8 or ASCII and the rest Latin-1 or
    Windows-1252) are read as Windows-1252 rather than replaced, and counted in ``legacy_bytes``.
    """

    def __init__(self, stream: IO[bytes] | io.RawIOBase, encoding: str) -> None:
        self._stream = stream
        self._legacy = codecs.lookup(encoding).name == "utf-8"
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="surrogateescape" if self._legacy
                                                                else "replace")
        self.replaced = 0
        self.legacy_bytes = 0

    def _as_legacy(self, found: re.Match[str]) -> str:
        raw = bytes(ord(c) - 0xDC00 for c in found.group())
        self.legacy_bytes += len(raw)
        return raw.decode("cp1252", "replace")

    def decoded(self) -> Iterator[str]:
        """The decoded text in blocks cut anywhere; in a file whose lines end in CR alone (the old Mac line end,
        Excel's "CSV (Macintosh)": no LF in its first block), each CR is a line end."""
        cr_lines = None
        while True:
            data = self._stream.read(BLOCK)
            text = self._decoder.decode(data or b"", final=not data)
            if self._legacy and _ESCAPED_BYTES.search(text):
                text = _ESCAPED_BYTES.sub(self._as_legacy, text)
            self.replaced += text.count("\ufffd")
            if text:
                cr_lines = ("\r" in text and "\n" not in text) if cr_lines is None else cr_lines
                yield text.replace("\r", "\n") if cr_lines else text
            if not data:
                return

    def __iter__(self) -> Iterator[tuple[int, str]]:
        line, pending = 1, ""
        for text in self.decoded():
            pending += text
            cut = pending.rfind("\n")
            if cut < 0:
                while len(pending) >= BLOCK:  # (a line with no end in sight: cut at a space, or anywhere)
                    cut = max(pending.rfind(" ", 0, BLOCK), BLOCK // 2)
                    yield line, pending[:cut]
                    pending = pending[cut:]
                continue
            yield line, pending[:cut]
            line += pending.count("\n", 0, cut) + 1
            pending = pending[cut + 1:]
        if pending:
            yield line, pending


_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")  # bytes that were not UTF-8 (surrogateescape)
_JSON_STRING_BODY = re.compile(r'(?:[^"\\\n]|\\.)*"')
_LINE_BREAKS = str.maketrans({"\n": "\t", "\r": "\t", "\u2028": "\t", "\u2029": "\t"})


def json_strings(blocks: TextBlocks) -> Iterator[tuple[int, str]]:
    """Every string literal (keys too) of JSON or JSON-lines text, decoded, with its line; and, line by line,
    whatever lies between them that is not JSON's own syntax (a comment of JSONC, a file that only has a .json
    name): what is not a string is read too, not dropped.

    A lexer rather than a parser: malformed JSON still yields its strings, and a single-line document of
    any size streams.
    """
    line, buffer = 1, ""
    for text in blocks.decoded():
        buffer += text
        position = 0
        while True:
            quote = buffer.find('"', position)
            if quote < 0:
                yield from _between_strings(line, buffer[position:])
                line += buffer.count("\n", position)
                buffer = ""
                break
            if quote > position:
                yield from _between_strings(line, buffer[position:quote])
            line += buffer.count("\n", position, quote)
            match = _JSON_STRING_BODY.match(buffer, quote + 1)
            if match is None:
                if "\n" in buffer[quote:] or len(buffer) - quote > BLOCK:  # not a string: skip the quote
                    position = quote + 1
                    continue
                buffer = buffer[quote:]  # the literal goes on in the next block
                break
            literal = buffer[quote:match.end()]
            yield line, decode_json_string(literal) if "\\" in literal else literal[1:-1]
            position = match.end()
    if buffer.strip():
        yield line, buffer.translate(_LINE_BREAKS)


_LETTER = re.compile(r"[^\W\d_]")
_JSON_SYNTAX = re.compile(r"[\s{}\[\],:]+|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\b(?:true|false|null)\b")


def _between_strings(line: int, gap: str) -> Iterator[tuple[int, str]]:
    """The lines of ``gap`` (text between two string literals) that hold more than JSON's syntax, with their lines."""
    if not _LETTER.search(gap):  # (nearly every gap: ": ", ", ", "}\n{")
        return
    for offset, part in enumerate(gap.split("\n")):
        if _LETTER.search(part) and _JSON_SYNTAX.sub("", part):
            yield line + offset, part


def decode_json_string(literal: str) -> str:
    """A JSON string literal's text, its escaped line ends turned into tabs (so lines stay right)."""
    try:
        value = json.loads(literal)
    except ValueError:
        return literal[1:-1]
    return value.translate(_LINE_BREAKS) if isinstance(value, str) else literal[1:-1]


# A run of text in a binary, in UTF-8 (ASCII included) or in UTF-16 or UTF-32 of either byte order: a NumPy array of
# strings (dtype '<U') is UTF-32, a SQLite database may be UTF-16, a Windows or .NET resource is UTF-16. The wide
# forms are taken for the Latin, Greek, Cyrillic, Armenian and Hebrew letters and general punctuation (U+0000–U+05FF,
# U+2010–U+203A) only: any two bytes are a UTF-16 character of some script, and a wider range would read much of a
# binary (model weights, arrays of token numbers) as text and could read text shifted by a byte. They are looked for
# only in a block where such a run holds a space (`_has_wide_text`), as the search for them is slower than for UTF-8
# alone.
_UTF8 = rb"[\t\n\r\x20-\x7e]|[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
_LATIN1 = rb"[\t\n\r\x20-\x7e\xa0-\xff]"
_UTF16_LE = rb"%s\x00|[\x00-\xff][\x01-\x05]|[\x10-\x3a]\x20" % _LATIN1
_UTF16_BE = rb"\x00%s|[\x01-\x05][\x00-\xff]|\x20[\x10-\x3a]" % _LATIN1
_UTF32_LE = rb"(?:%s\x00|[\x00-\xff][\x01-\x05]|[\x10-\x3a]\x20)\x00\x00" % _LATIN1
_UTF32_BE = rb"\x00\x00(?:\x00%s|[\x01-\x05][\x00-\xff]|\x20[\x10-\x3a])" % _LATIN1
_WIDE = ((b"utf_16_le", _UTF16_LE), (b"utf_16_be", _UTF16_BE), (b"utf_32_le", _UTF32_LE), (b"utf_32_be", _UTF32_BE))
_WIDE_HINTS = (b"\x00\x20\x00", *(bytes([high, 0x20, 0]) for high in range(1, 6)),
               *(bytes([0, 0x20, high]) for high in range(1, 6)))
_UTF8_RUN = re.compile(rb"(?:%s){%d,}" % (_UTF8, MIN_BINARY_RUN))
_BINARY_RUN = re.compile(b"|".join(rb"(?P<%s>(?:%s){%d,})" % (name, char, MIN_BINARY_RUN)
                                    for name, char in ((b"utf_8", _UTF8), *_WIDE)))
# a wide run starting at the last byte of a UTF-8 run ("…header\nE\0\0\0l\0\0\0…": the E is the wide run's)
_WIDE_RUN = re.compile(b"|".join(rb"(?:%s){%d,}" % (char, MIN_BINARY_RUN) for _name, char in _WIDE))


# One printable byte glued to a capitalised word at a run's start: in a binary (a SQLite database, a pickle, a Java
# class file), the length or type byte of the record that holds the text, which happens to be printable. (One byte
# only: "McDonald" at a run's start stays whole; "iPhone" loses its i.)
_GLUED = re.compile(r"[!-~](?=[A-Z\u00c0-\u00de][a-z\u00df-\u00ff])")


def _has_wide_text(block: bytes) -> bool:
    """Whether a UTF-16 or UTF-32 run is in ``block``: one around a space in one of those forms (found at memory
    speed, then checked around it)."""
    for hint in _WIDE_HINTS:
        at = block.find(hint)
        while at != -1:
            if _WIDE_RUN.search(block, max(0, at - 64), at + 64):
                return True
            at = block.find(hint, at + 1)
    return False


def binary_runs(stream: IO[bytes] | io.RawIOBase) -> Iterator[tuple[int, str]]:
    """``(byte offset, text)`` of every run of at least 8 printable characters in a binary (`_BINARY_RUN`: UTF-8, or
    UTF-16 or UTF-32 of either byte order), without a record byte glued to its first word (`_GLUED`)."""
    offset, carry = 0, b""
    while True:
        data = stream.read(BLOCK)
        block = carry + (data or b"")
        carry = b""
        at, runs = 0, _BINARY_RUN if _has_wide_text(block) else _UTF8_RUN
        while (match := runs.search(block, at)) is not None:
            start, at, codec = match.start(), match.end(), match.lastgroup or "utf_8"
            if data and at == len(block) and at - start < BLOCK:
                carry = block[start:]  # the run may go on in the next block
                break
            if codec == "utf_8" and at < len(block) and block[at] == 0 and block[at - 1] < 0x80 \
                    and _WIDE_RUN.match(block, at - 1):
                at -= 1  # (its last character is the first of a UTF-16 or UTF-32 run)
            text = block[start:at].decode(codec, "replace").translate(_LINE_BREAKS)
            glued = _GLUED.match(text)
            if glued is not None:  # (a record's header byte before its text: "SHay una…" is "Hay una…")
                width = 4 if "32" in codec else 2 if "16" in codec else 1
                yield offset + start + glued.end() * width, text[glued.end():]
            else:
                yield offset + start, text
        if not data:
            return
        offset += len(block) - len(carry)
