"""Text hidden one step deeper: base64 runs inside text or string literals, decoded (and decompressed when
they hold gzip, zlib, bzip2 or xz data) — the usual way to embed a data file in source code.

A run of at least 64 base64 characters is decoded, with the lines that continue it when it is wrapped; so are
consecutive literals made of base64 characters alone, joined (``"H4sI…" +\n "AAAA…"``: a blob split over literals
joined with ``+``, or the items of an array); the result is kept when it is text (UTF-8, nearly all printable), and
read at the line where the run starts. Decoding and decompression are bounded.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import html
import lzma
import re
import zlib
from collections.abc import Iterable, Iterator

MIN_RUN = 64
MAX_DECODED = 16 << 20
# A run, and the lines that continue it when it is wrapped (`base64.encodebytes` and the base64 tool break lines at
# 76 characters): each further line of base64 characters alone, indentation allowed.
_BASE64_RUN = re.compile("[A-Za-z0-9+/]{" + str(MIN_RUN) + r",}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/]{4,})*={0,2}")
_SPACE = re.compile(r"\s+")
_BREAKS = str.maketrans({"\n": "\t", "\r": "\t"})


def with_embedded(pieces: Iterable[tuple[int, str]], found: list[int]) -> Iterator[tuple[int, str]]:
    """``pieces``, each followed by the text decoded from the base64 runs in it, and a chain of pieces of base64
    alone by what it decodes to when none of them decoded alone; ``found`` counts them. A piece's escapes are
    read as what they stand for (`unescaped`)."""
    chain: list[str] = []  # consecutive pieces of base64 characters alone, none of which decoded by itself
    chain_line = chain_size = 0
    for line, text in pieces:
        if "\\" in text or "&" in text or "%" in text:
            text = unescaped(text)
        yield line, text
        decoded_here = False
        if len(text) >= MIN_RUN:
            for match in _BASE64_RUN.finditer(text):
                run = match.group()
                decoded = decode_run(_SPACE.sub("", run))
                if decoded is None and "\n" in run:  # (a line after the run that only looks like base64: alone)
                    decoded = decode_run(run[:run.index("\n")].rstrip())
                if decoded is not None:
                    decoded_here = True
                    found[0] += 1
                    yield line + text.count("\n", 0, match.start()), decoded.translate(_BREAKS)
        if not decoded_here and len(text) >= _MIN_LINK and chain_size < MAX_DECODED and _ALL_BASE64.fullmatch(text):
            if not chain:
                chain_line = line
            chain.append(text)
            chain_size += len(text)
            continue
        yield from _chain_decoded(chain, chain_line, found)
        chain, chain_size = [], 0
    yield from _chain_decoded(chain, chain_line, found)


# \u00ed (JSON written with ensure_ascii, Python and JavaScript escapes), &#237; &#xED; &iacute; (XML, HTML), and a run
# of byte escapes: \xc3\xad (C, Go, Rust and shell strings, Python bytes as printed) or %C3%AD (a URL's query)
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|(?P<bytes>(?:\\x[0-9a-fA-F]{2})+|(?:%[0-9a-fA-F]{2})+)"
                     r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def unescaped(text: str) -> str:
    """``text`` with its character escapes read as the characters they stand for: ``r\\u00edo``, ``r&#237;o``,
    ``r\\xc3\\xado`` and ``r%C3%ADo`` are ``río`` (a translation memory in TMX, JSON lines written by ``json.dump``, a
    C string, a URL); a line end becomes a tab. A run of byte escapes is read as UTF-8 when it is UTF-8; else each
    ``\\x`` byte is a Latin-1 character (``\\xed`` is ``í``) and a run of percent escapes is left as it is."""
    def character(found: re.Match[str]) -> str:
        if found.group("bytes"):
            raw = bytes.fromhex(found.group("bytes").replace("\\x", "").replace("%", ""))
            try:
                return raw.decode("utf-8").translate(_BREAKS)
            except UnicodeDecodeError:
                return raw.decode("latin-1").translate(_BREAKS) if found.group().startswith("\\") else found.group()
        if found.group(1) is None:
            return html.unescape(found.group())
        value = int(found.group(1), 16)
        return found.group() if 0xD800 <= value <= 0xDFFF else chr(value).translate(_BREAKS)

    return _ESCAPE.sub(character, text)


_MIN_LINK = 16  # the shortest literal taken as a piece of a split blob
_ALL_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _chain_decoded(chain: list[str], line: int, found: list[int]) -> Iterator[tuple[int, str]]:
    if len(chain) < 2 or sum(map(len, chain)) < MIN_RUN:
        return
    decoded = decode_run("".join(chain))
    if decoded is not None:
        found[0] += 1
        yield line, decoded.translate(_BREAKS)


def decode_run(run: str) -> str | None:
    """The text a base64 run stands for, or None when it is not text (an image, a hash, random bytes)."""
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    data = _decompressed(raw)
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text[:4096])
    return text if text and printable >= 0.95 * min(len(text), 4096) else None


def _decompressed(data: bytes) -> bytes | None:
    try:
        if data[:2] == b"\x1f\x8b":
            return zlib.decompressobj(31).decompress(data, MAX_DECODED)
        if data[:1] == b"\x78" and data[1:2] in (b"\x01", b"\x5e", b"\x9c", b"\xda"):
            return zlib.decompressobj().decompress(data, MAX_DECODED)
        if data[:3] == b"BZh":
            return bz2.BZ2Decompressor().decompress(data, MAX_DECODED)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.LZMADecompressor().decompress(data, MAX_DECODED)
    except (zlib.error, OSError, EOFError, lzma.LZMAError):
        return None
    return data
