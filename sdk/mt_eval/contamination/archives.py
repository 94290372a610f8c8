"""Compressed files and archives: recognising them by their first bytes and opening what can be opened.

gzip, bzip2, xz, zlib (``zlib.compress``) and legacy .lzma streams are decompressed on the fly (the last two
have no magic number of their own: their head must decompress); zip and tar archives are opened member by
member (archives inside them too, down to `CheckSettings.max_archive_depth`), and so is a zip with bytes before
it (a Python zipapp's ``#!`` line). zstd, 7-Zip, RAR and LZ4 are recognised but cannot be opened with the
standard library: they are reported, never skipped silently.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import IO, Any

STREAMS = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile, "zlib": None, "lzma": None}
UNSUPPORTED = {"zstd": "zstd-compressed", "7z": "a 7-Zip archive", "rar": "a RAR archive", "lz4": "LZ4-compressed"}
_MAGIC = [(b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"PK\x03\x04", "zip"),
          (b"PK\x05\x06", "zip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"7z\xbc\xaf\x27\x1c", "7z"),
          (b"Rar!\x1a\x07", "rar"), (b"\x04\x22\x4d\x18", "lz4")]
_INNER_SUFFIX = {".tgz": ".tar", ".tbz": ".tar", ".tbz2": ".tar", ".txz": ".tar"}

# What can go wrong inside a damaged or hostile archive.
ARCHIVE_ERRORS: tuple[type[BaseException], ...] = (
    OSError, EOFError, zlib.error, lzma.LZMAError, tarfile.TarError, zipfile.BadZipFile, NotImplementedError,
    RuntimeError, ValueError)


def archive_kind(head: bytes) -> str | None:
    """``gzip``, ``bzip2``, ``xz``, ``zip``, ``tar``, one of `UNSUPPORTED`, or None for anything else."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[257:262] == b"ustar":
        return "tar"
    if head[:1] == b"\x78" and len(head) > 2 and (head[0] << 8 | head[1]) % 31 == 0 and _starts(head, "zlib"):
        return "zlib"
    if head[:1] == b"\x5d" and head[1:3] == b"\x00\x00" and _starts(head, "lzma"):
        return "lzma"
    return None


def zip_with_prefix(path: str) -> bool:
    """Whether the file at ``path`` is a zip archive behind other bytes (a zipapp: ``#!`` line, then the zip)."""
    try:
        return zipfile.is_zipfile(path)
    except OSError:
        return False


def _starts(head: bytes, kind: str) -> bool:
    """Whether ``head`` decompresses as a ``kind`` stream (a text that only starts like one does not)."""
    try:
        if kind == "zlib":
            return bool(zlib.decompressobj().decompress(head, 256)) or len(head) < 64
        return bool(lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(head, 256)) or len(head) < 64
    except (zlib.error, lzma.LZMAError, EOFError):
        return False


def inner_name(name: str) -> str:
    """The name of what a single-stream compressed file holds: ``data.jsonl.gz`` → ``data.jsonl``."""
    path = PurePosixPath(name)
    suffix = path.suffix.lower()
    if suffix in _INNER_SUFFIX:
        return str(path.with_suffix(_INNER_SUFFIX[suffix]))
    if suffix in (".gz", ".gzip", ".bz2", ".xz", ".lzma", ".zlib", ".zz"):
        return str(path.with_suffix(""))
    return name


def decompressed(kind: str, stream: Any) -> IO[bytes]:
    """The decompressed bytes of a gzip, bzip2, xz, zlib or legacy .lzma stream."""
    if kind == "zlib":
        return io.BufferedReader(_Inflating(stream))
    if kind == "lzma":
        return lzma.LZMAFile(stream, format=lzma.FORMAT_ALONE)
    opener: Any = STREAMS[kind]
    opened: IO[bytes] = opener(fileobj=stream) if kind == "gzip" else opener(stream)
    return opened


class _Inflating(io.RawIOBase):
    """A zlib stream, decompressed as it is read."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._inflate = zlib.decompressobj()
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            if self._inflate.eof:
                return 0
            data = self._inflate.unconsumed_tail or self._stream.read(1 << 16)
            if not data:
                self._pending = self._inflate.flush()
                if not self._pending:
                    return 0
                break
            self._pending = self._inflate.decompress(data, 1 << 20)  # (what is left over: the next call's)
        count = min(len(buffer), len(self._pending))
        buffer[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count


def zip_members(stream: Any, path: str | None, on_position: Callable[[int], None] | None = None
                ) -> Iterator[tuple[zipfile.ZipInfo, zipfile.ZipFile]]:
    """The file members of a zip archive (read from ``path`` when it is a file on disk, else spooled);
    ``on_position`` is told how far into the file on disk each read has got (progress inside a large archive)."""
    with tempfile.TemporaryFile(prefix="mt-eval-zip-") as spool:
        source: IO[bytes] = spool
        if path is None:
            shutil.copyfileobj(stream, spool)
            spool.seek(0)
        else:
            source = _PositionTold(path, on_position)
        with source, zipfile.ZipFile(source) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info, archive


class _PositionTold(io.FileIO):
    """A file on disk that tells ``on_position`` its position after each read."""

    def __init__(self, path: str, on_position: Callable[[int], None] | None) -> None:
        super().__init__(path, "rb")
        self._on_position = on_position

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        if self._on_position is not None:
            self._on_position(self.tell())
        return data


def tar_members(stream: Any) -> Iterator[tuple[tarfile.TarInfo, tarfile.TarFile]]:
    """Every member of an (uncompressed) tar stream, in order; read each before asking for the next."""
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            yield member, archive
