"""Every piece of text in a bundle, as documents the matcher reads, and a finding for whatever resists.

By what a file *is* (its first bytes) before what it is called: archives and compressed files are opened;
by name then: Python and JavaScript/TypeScript sources give their string literals and comments, JSON
and JSON lines their string values and keys; anything else that decodes as text is read line by line
(TSV, CSV, Markdown, prompts, YAML…); a binary file gives the runs of text inside it. A file that is too
large, unreadable, or breaks part-way is reported with what was read of it.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

from mt_eval.contamination import archives, git_history
from mt_eval.contamination.bundle_walk import walk_bundle
from mt_eval.contamination.code_strings import javascript_pieces, python_pieces
from mt_eval.contamination.decoding import (
    ByteBudget,
    LimitedReader,
    PrefixedReader,
    TextBlocks,
    TooLarge,
    binary_runs,
    json_strings,
    sniff,
)
from mt_eval.contamination.embedded import with_embedded
from mt_eval.contamination.matching import Document
from mt_eval.contamination.report import Effect, Finding
from mt_eval.contamination.settings import CheckSettings
from mt_eval.lone_surrogates import writable

PYTHON = {".py", ".pyw", ".pyi"}
JAVASCRIPT = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
JSON = {".json", ".jsonl", ".ndjson", ".ipynb", ".geojson", ".webmanifest", ".har"}
PROGRESS_EVERY_S = 0.5  # inside a large file, progress is told this often at most


class BundleReader:
    """Turns a bundle directory into documents; collects findings and counts files and bytes."""

    def __init__(self, root: Path, settings: CheckSettings,
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.root = root
        self.settings = settings
        self.findings: list[Finding] = []
        self.files = 0
        self.bytes = 0
        self._progress = progress
        self._told = time.monotonic()

    def documents(self) -> Iterator[Document]:
        """Each document must be read to its end before the next is asked for."""
        repositories: list[tuple[Path, str]] = []
        for path, relative in walk_bundle(self.root, self.findings, repositories):
            yield from self._file(path, relative)
            self._progressed()
        for git_dir, relative in repositories:
            yield from self._history(git_dir, relative)

    def _progressed(self) -> None:
        if self._progress is not None:
            self._progress(self.files, self.bytes)

    def _reading(self, read: int) -> None:
        """Progress inside a file (a large one takes seconds): ``read`` bytes of the files so far."""
        if self._progress is not None and (now := time.monotonic()) - self._told >= PROGRESS_EVERY_S:
            self._told = now
            self._progress(self.files, read)

    def _history(self, git_dir: Path, relative: str) -> Iterator[Document]:
        """What a git repository's history holds that its checked-out files do not (`git_history`), each object
        read as a file named ``<repository>/objects:<its path in history>``."""
        store = f"{'' if relative == '.' else relative + '/'}objects"
        work_tree = git_dir.parent if git_dir.name == ".git" else None
        try:
            history = git_history.list_objects(git_dir, work_tree, self.root)
            readable = [stored for stored in history.objects if stored.size <= self.settings.max_file_bytes]
            for stored in history.objects:
                if stored.size > self.settings.max_file_bytes:
                    self._note(f"{store}:{stored.name}", "too-large", f"{stored.size:,} bytes, over the "
                               f"{self.settings.max_file_bytes:,}-byte limit (--max-file-size): not read", "unverified")
            with contextlib.closing(git_history.read_objects(git_dir, readable)) as objects:
                for stored, stream in objects:
                    self.files += 1
                    self.bytes += stored.size
                    display = f"{store}:{stored.name}"
                    try:
                        reader = LimitedReader(stream, self.settings.max_file_bytes)  # type: ignore[arg-type]
                        yield from self._stream(reader, display, PurePosixPath(stored.name).name, 0,
                                                ByteBudget(self.settings.max_archive_bytes))
                    except TooLarge as exc:
                        self._note(display, "too-large", f"not fully read: {exc}", "unverified")
                    except archives.ARCHIVE_ERRORS as exc:
                        self._note(display, "unreadable", f"read failed part-way: {_describe(exc)}", "unverified")
                    self._progressed()
        except git_history.HistoryError as exc:
            self._note(store, "history", f"the repository's history was not read: {exc}", "unverified")
            return
        held = (f"; {history.checked_out:,} more are files checked out beside it, read as those"
                if history.checked_out else "")
        for borrowed in history.borrowed:
            self._note(store, "history", f"it borrows objects from {borrowed}, outside the bundle "
                       "(objects/info/alternates): those are not the bundle's and were not read")
        self._note(store, "history", f"the repository's object store, read through git: {len(readable):,} "
                   f"object(s) of its history (files, commits, tags){held}")

    def _note(self, file: str, kind: str, message: str, effect: Effect = "info") -> None:
        # (a name inside an archive or a history that is not UTF-8 is written with its escapes)
        self.findings.append(Finding(file=writable(file), kind=kind, message=writable(message), effect=effect))

    def _file(self, path: Path, relative: str) -> Iterator[Document]:
        try:
            size = path.stat().st_size
            if size > self.settings.max_file_bytes:
                self._note(relative, "too-large", f"{size:,} bytes, over the {self.settings.max_file_bytes:,}-byte "
                           "limit (--max-file-size): not read", "unverified")
                return
            handle = path.open("rb")
        except OSError as exc:
            self._note(relative, "unreadable", f"cannot read it: {exc.strerror or exc}", "unverified")
            return
        self.files += 1
        read_before, self.bytes = self.bytes, self.bytes + size
        with handle:
            budget = ByteBudget(self.settings.max_archive_bytes)
            try:
                reader = LimitedReader(handle, self.settings.max_file_bytes,
                                       on_read=lambda count: self._reading(read_before + count))
                yield from self._stream(reader, relative, path.name, 0, budget, on_disk=str(path))
            except TooLarge as exc:
                self._note(relative, "too-large", f"not fully read: {exc}", "unverified")
            except archives.ARCHIVE_ERRORS as exc:
                self._note(relative, "unreadable", f"read failed part-way: {_describe(exc)}", "unverified")

    def _stream(self, reader: LimitedReader, display: str, name: str, depth: int, budget: ByteBudget,
                on_disk: str | None = None, as_code: bool = True) -> Iterator[Document]:
        kind = archives.archive_kind(reader.head)
        if kind is None and on_disk is not None and b"PK\x03\x04" in reader.head and archives.zip_with_prefix(on_disk):
            kind = "zip"  # (a zipapp: a #! line, then the archive)
        if kind is not None:
            yield from self._archive(kind, reader, display, name, depth, budget, on_disk)
            return
        suffix = PurePosixPath(name).suffix.lower()
        if as_code and (suffix in PYTHON or suffix in JAVASCRIPT):
            yield from self._code(reader, display, name, depth, budget)
            return
        sniffed = sniff(reader.head, reader.head_is_all)
        if sniffed.encoding is None:
            if sniffed.note:
                self._note(display, "encoding", f"{sniffed.note}: only the ASCII and UTF-8 runs in it were read",
                           "unverified")
            else:
                self._note(display, "binary", "binary file: the runs of text inside it were read")
            yield from self._document(display, self._guarded(display, binary_runs(reader)), "byte")
            return
        if sniffed.note:
            self._note(display, "encoding", sniffed.note)
        blocks = TextBlocks(reader, sniffed.encoding)
        pieces: Iterable[tuple[int, str]] = json_strings(blocks) if suffix in JSON else blocks
        yield from self._document(display, self._guarded(display, pieces))
        if blocks.replaced:
            self._note(display, "encoding", f"{blocks.replaced:,} character(s) could not be decoded as "
                       f"{sniffed.encoding} and were replaced")
        if blocks.legacy_bytes:
            self._note(display, "encoding", f"{blocks.legacy_bytes:,} byte(s) that are not UTF-8 were read as "
                       "Windows-1252 (the file mixes encodings)")

    def _code(self, reader: LimitedReader, display: str, name: str, depth: int, budget: ByteBudget
              ) -> Iterator[Document]:
        """A source's literals and comments; a source too large to parse, or that does not parse, as text."""
        data = read_up_to(reader, self.settings.max_code_bytes + 1)
        suffix = PurePosixPath(name).suffix.lower()
        if len(data) > self.settings.max_code_bytes:
            self._note(display, "too-large-to-parse", f"over {self.settings.max_code_bytes:,} bytes "
                       "(--max-code-size): read as plain text, not parsed")
            rest = LimitedReader(PrefixedReader(data, reader), self.settings.max_file_bytes)  # type: ignore[arg-type]
            yield from self._stream(rest, display, name, depth, budget, as_code=False)
            return
        if suffix in PYTHON:
            pieces, problem = python_pieces(data)
        else:
            pieces, problem = javascript_pieces(data, suffix)
        if pieces is None:
            self._note(display, "parse", f"{problem}: read as plain text")
            again = LimitedReader(io.BytesIO(data), self.settings.max_file_bytes)
            yield from self._stream(again, display, name, depth, budget, as_code=False)
            return
        yield from self._document(display, pieces)

    def _document(self, display: str, pieces: Iterable[tuple[int, str]], locator: str = "line"
                  ) -> Iterator[Document]:
        """The document, with the text of base64 runs inside it decoded (`embedded`), and a note of them."""
        found = [0]
        yield Document(writable(display), with_embedded(pieces, found), locator=locator)  # type: ignore[arg-type]
        if found[0]:
            self._note(display, "embedded", f"{found[0]:,} base64 run(s) inside it decoded to text and read")

    def _archive(self, kind: str, reader: LimitedReader, display: str, name: str, depth: int, budget: ByteBudget,
                 on_disk: str | None) -> Iterator[Document]:
        if kind in archives.UNSUPPORTED:
            self._note(display, "archive", f"{archives.UNSUPPORTED[kind]} file: cannot be opened, so not checked",
                       "unverified")
            return
        if depth > self.settings.max_archive_depth:  # (``depth`` archives around it; the bundle's own are opened)
            others = f"{depth} other{'s' if depth != 1 else ''}"
            self._note(display, "archive", f"an archive inside {others}, deeper than --max-archive-depth "
                       f"{self.settings.max_archive_depth}: not opened", "unverified")
            return
        limit = self.settings.max_file_bytes
        if kind in archives.STREAMS:
            inner = LimitedReader(archives.decompressed(kind, reader), limit, budget)
            tarball = archives.archive_kind(inner.head) == "tar"  # (a .tar.gz is one archive, not a tar inside one)
            yield from self._stream(inner, display, archives.inner_name(name), depth if tarball else depth + 1,
                                    budget)
        elif kind == "zip":
            for info, archive in archives.zip_members(reader, on_disk, reader.on_read):
                yield from self._member(f"{display}:{info.filename}", info.filename, info.file_size,
                                        lambda info=info, archive=archive: archive.open(info),  # type: ignore[misc]
                                        depth, budget, encrypted=bool(info.flag_bits & 0x1))
        else:
            for member, tar in archives.tar_members(reader):
                member_display = f"{display}:{member.name}"
                if member.issym() or member.islnk():
                    self._note(member_display, "symlink", f"link inside the archive to {member.linkname}: "
                               "not followed")
                elif member.isreg():
                    yield from self._member(member_display, member.name, member.size,
                                            lambda member=member, tar=tar: tar.extractfile(member),  # type: ignore[misc]
                                            depth, budget)

    def _member(self, display: str, name: str, size: int, open_member: Callable[[], Any], depth: int,
                budget: ByteBudget, encrypted: bool = False) -> Iterator[Document]:
        if encrypted:
            self._note(display, "unreadable", "encrypted archive member: not checked", "unverified")
            return
        if size > self.settings.max_file_bytes:
            self._note(display, "too-large", f"{size:,} bytes, over the {self.settings.max_file_bytes:,}-byte limit "
                       "(--max-file-size): not read", "unverified")
            return
        try:
            with open_member() as member:
                reader = LimitedReader(member, self.settings.max_file_bytes, budget)
                yield from self._stream(reader, display, name, depth + 1, budget)
        except TooLarge as exc:
            if "archive" in str(exc):
                raise
            self._note(display, "too-large", f"not fully read: {exc}", "unverified")
        except archives.ARCHIVE_ERRORS as exc:
            self._note(display, "unreadable", f"cannot read this member: {_describe(exc)}", "unverified")

    def _guarded(self, display: str, pieces: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        """``pieces``, stopping with a finding (instead of an exception) when reading fails part-way."""
        try:
            yield from pieces
        except TooLarge as exc:
            self._note(display, "too-large", f"not fully read: {exc}", "unverified")
        except archives.ARCHIVE_ERRORS as exc:
            self._note(display, "unreadable", f"read failed part-way: {_describe(exc)}", "unverified")


def read_up_to(stream: IO[bytes] | io.RawIOBase, size: int) -> bytes:
    """Up to ``size`` bytes: fewer only at the end of the stream (a raw stream's ``read`` may return less)."""
    parts, left = [], size
    while left > 0:
        data = stream.read(min(left, 1 << 20))
        if not data:
            break
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{text} ({type(exc).__name__})"
