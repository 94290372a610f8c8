"""The entries of a large JSONL corpus, read from the file when they are needed rather than held in memory.

A million entries held as Python dicts take most of a gigabyte. A plain (uncompressed) JSONL corpus of
`ON_DISK_FROM` bytes or more is read once, to check it, and then kept as `EntriesOnDisk`: where each entry's
line is in the file (offset and length) and its line number, 20 bytes an entry. Indexing decodes one line;
iterating reads the file in blocks. Every entry read is made what the reader made it in memory (its field
aliases renamed, its id as text) by the same function, `EntriesOnDisk.fix`.

``MT_EVAL_ON_DISK_FROM`` (bytes) sets the size from which a corpus stays on disk (0: every plain JSONL
corpus). The default, 32 MiB (some 200,000 entries), keeps a smaller corpus in memory: its entries cost about
100 MiB per 100,000 there, and reading it takes one pass over the file instead of one per check (about 1.2x
the bare parse against 4x; ``benchmarks/corpus.py``).

A selection (``--ids``, ``--segment``, ``--limit``) or a filter (`EntriesOnDisk.where`) is another
`EntriesOnDisk` over some of the lines. Entries read are fresh dicts each time: changing one changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec

if TYPE_CHECKING:
    import numpy as np


def _bytes_from_environment(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else default


ON_DISK_FROM = _bytes_from_environment("MT_EVAL_ON_DISK_FROM", 32 << 20)  # bytes of JSONL whose entries stay on disk
BLOCK = 4_096  # entries read at once when iterating
_SPAN = 16 << 20  # bytes read in one go for a block whose lines lie close together

Fix = Callable[[Any, int], Any]  # (decoded line, its line number) -> the entry

_decode = msgspec.json.Decoder().decode


class EntriesOnDisk(Sequence[dict[str, Any]]):
    """Entries of ``path`` at byte ``offsets`` (``lengths`` bytes each, line ``numbers``), each made an entry by
    ``fix``."""

    def __init__(self, path: Path, offsets: np.ndarray, lengths: np.ndarray, numbers: np.ndarray, fix: Fix) -> None:
        self.path = path
        self.offsets = offsets
        self.lengths = lengths
        self.numbers = numbers
        self.fix = fix

    def __len__(self) -> int:
        return len(self.offsets)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> EntriesOnDisk: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | EntriesOnDisk:
        if isinstance(index, slice):
            return self.take(range(len(self))[index])
        position = range(len(self))[index]  # IndexError, and negative indices, as a list has them
        with self.path.open("rb") as file:
            file.seek(int(self.offsets[position]))
            line = file.read(int(self.lengths[position]))
        entry: dict[str, Any] = self.fix(_decode(line), int(self.numbers[position]))
        return entry

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for block in self.blocks():
            yield from block

    def __bool__(self) -> bool:
        return len(self) > 0

    def blocks(self, size: int = BLOCK) -> Iterator[list[dict[str, Any]]]:
        """The entries in order, ``size`` at a time (the lines of a block are read together when close)."""
        fix = self.fix
        for start, lines in read_lines(self.path, self.offsets, self.lengths, size):
            numbers = self.numbers[start:start + len(lines)].tolist()
            yield [fix(_decode(line), number) for line, number in zip(lines, numbers, strict=True)]

    def take(self, positions: Sequence[int] | range | np.ndarray) -> EntriesOnDisk:
        """The entries at ``positions`` (ascending, for corpus order)."""
        import numpy as np  # (imported here: reading a corpus needs numpy only once it is large)

        chosen = np.asarray(positions, dtype=np.int64)
        return EntriesOnDisk(self.path, self.offsets[chosen], self.lengths[chosen], self.numbers[chosen], self.fix)

    def where(self, keep: Callable[[dict[str, Any]], bool]) -> EntriesOnDisk:
        """The entries ``keep`` is true of, in order (one pass over the file)."""
        import numpy as np

        mask = np.fromiter((bool(keep(entry)) for entry in self), bool, count=len(self))
        return self.take(np.flatnonzero(mask))


def read_lines(path: Path, offsets: np.ndarray, lengths: np.ndarray, size: int, *, span: int = _SPAN
               ) -> Iterator[tuple[int, list[bytes]]]:
    """The lines of ``path`` at ``offsets`` (``lengths`` bytes each), ``size`` at a time with the position of the
    first: the lines of a block are read in one go when they lie within ``span`` bytes."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        for start in range(0, len(offsets), size):
            where = offsets[start:start + size].tolist()
            sizes = lengths[start:start + size].tolist()
            low, high = min(where), max(o + n for o, n in zip(where, sizes, strict=True))
            if high - low <= span:
                data = os.pread(descriptor, high - low, low)
                yield start, [data[o - low:o - low + n] for o, n in zip(where, sizes, strict=True)]
            else:
                yield start, [os.pread(descriptor, n, o) for o, n in zip(where, sizes, strict=True)]
    finally:
        os.close(descriptor)


def kept(entries: Sequence[dict[str, Any]], keep: Callable[[dict[str, Any]], bool]) -> Sequence[dict[str, Any]]:
    """The entries ``keep`` is true of, in order: a list of them, or, for entries on disk, entries on disk."""
    if isinstance(entries, EntriesOnDisk):
        return entries.where(keep)
    return [entry for entry in entries if keep(entry)]


def in_blocks(entries: Sequence[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """The entries as lists of ``size`` (the last may be shorter), read a block at a time from disk."""
    if isinstance(entries, EntriesOnDisk):
        pending: list[dict[str, Any]] = []
        for block in entries.blocks(max(size, BLOCK)):
            pending.extend(block)
            while len(pending) >= size:
                yield pending[:size]
                del pending[:size]
        if pending:
            yield pending
        return
    for start in range(0, len(entries), size):
        yield list(entries[start:start + size])
