"""``results.jsonl``: one final result per line, appended as entries complete; never an entry twice.

A crash (or a full disk, or a power cut) can leave the last line torn: cut in the middle of a record, or
filled with NUL bytes by a file system that had extended the file before its data reached the disk.
Readers skip such a tail. Before a run appends to a log (``--resume``), `repair` makes it whole again:
a torn tail is truncated, so the next record starts on a line of its own, and a log damaged before its
end (lines that are not results, or entries recorded twice by an older version) is rewritten with every
complete record kept once; what was dropped is reported, and those entries are translated again.
A result for an entry the log already holds is never appended.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.records import TranslationResult

log = logging.getLogger("mt_eval.harness")
_decode_result = msgspec.json.Decoder(TranslationResult).decode
_encode = msgspec.json.Encoder().encode


@dataclass
class LogScan:
    """What a log holds: each entry's first result, and what is wrong with the rest of it."""

    results: dict[str, TranslationResult] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)  # ids recorded more than once (the first is kept)
    damaged: list[int] = field(default_factory=list)  # numbers of lines before the end that are not results
    torn_bytes: int = 0  # bytes after the last complete line that are not a result (a torn write)
    good_end: int = 0  # offset just past the last complete result line
    unterminated: bool = False  # the last result is complete but its newline never reached the disk

    @property
    def needs_rewrite(self) -> bool:
        return bool(self.damaged or self.duplicates)


def scan(path: Path) -> LogScan:
    """Read ``path`` (a missing file is an empty log) without changing it."""
    found = LogScan()
    if not path.exists():
        return found
    data = path.read_bytes()
    offset = 0
    number = 0
    damaged_since: int | None = None  # first damaged line not yet followed by a good one
    while offset < len(data):
        end = data.find(b"\n", offset)
        line = data[offset:] if end < 0 else data[offset:end]
        number += 1
        next_offset = len(data) if end < 0 else end + 1
        if line.strip(b" \t\r"):
            try:
                result = _decode_result(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                if damaged_since is None:
                    damaged_since = number
                found.damaged.append(number)
            else:
                if damaged_since is not None:
                    damaged_since = None  # the damage is followed by good records: it is not a torn tail
                if result.id in found.results:
                    found.duplicates.append(result.id)
                else:
                    found.results[result.id] = result
                found.good_end = next_offset
                found.unterminated = end < 0
        offset = next_offset
    if damaged_since is not None:  # everything after the last good record is a torn tail
        found.damaged = [n for n in found.damaged if n < damaged_since]
        found.torn_bytes = len(data) - found.good_end
    elif found.good_end < len(data):
        found.torn_bytes = len(data) - found.good_end  # blank bytes after the last record
    return found


def read_results(path: Path) -> dict[str, TranslationResult]:
    """Each entry's result, for readers: a torn tail is skipped, an entry recorded twice keeps its first
    result (with a warning naming the ids), a damaged line before the end is an error."""
    found = scan(path)
    if found.damaged:
        lines = ", ".join(str(n) for n in found.damaged[:10])
        raise ValueError(f"{path}: line {lines} {'is' if len(found.damaged) == 1 else 'are'} not a result; the log "
                         "is damaged: `mt-eval run ... --resume` repairs it (those entries are translated again)")
    if found.duplicates:
        log.warning("%s records %s more than once; the first result of each is used", path,
                    _ids(found.duplicates))
    return found.results


def repair(path: Path) -> list[str]:
    """Make the log whole before appending to it; returns what was done, one sentence each."""
    found = scan(path)
    notes: list[str] = []
    if found.needs_rewrite:
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(b"".join(_encode(result) + b"\n" for result in found.results.values()))
        os.replace(temporary, path)
        if found.damaged:
            notes.append(f"{path}: dropped {len(found.damaged)} damaged line(s) (line "
                         f"{', '.join(str(n) for n in found.damaged[:10])}); their entries are translated again")
        if found.duplicates:
            notes.append(f"{path}: {_ids(found.duplicates)} were recorded more than once; kept the first result "
                         "of each")
        if found.torn_bytes:
            notes.append(f"{path}: dropped a torn last line ({found.torn_bytes} bytes, from a run that stopped "
                         "while writing it); its entry is translated again")
        return notes
    if found.torn_bytes:
        with path.open("r+b") as file:  # good_end is just past a newline (or 0)
            file.truncate(found.good_end)
        notes.append(f"{path}: dropped a torn last line ({found.torn_bytes} bytes, from a run that stopped while "
                     "writing it); its entry is translated again")
    if found.unterminated:
        with path.open("ab") as file:
            file.write(b"\n")
    return notes


def _ids(ids: list[str]) -> str:
    unique = list(dict.fromkeys(ids))
    shown = ", ".join(unique[:10]) + (f" and {len(unique) - 10} more" if len(unique) > 10 else "")
    return f"{len(unique)} entr{'y' if len(unique) == 1 else 'ies'} ({shown})"


class ResultsLog:
    """The log of one run, open for appending; ``known`` are the ids it already holds.

    The ids written lately are kept as text; every `FOLD_AFTER` of them are folded into a sorted array of their
    hashes (8 bytes an id, not a string and a set slot: a million ids would be most of a run's memory). An id
    whose hash is found there is confirmed by reading the log, so a hash shared by two ids loses nothing."""

    FOLD_AFTER = 4_096  # few strings live long, so few memory pools are held by them

    def __init__(self, path: Path, known: set[str] | None = None) -> None:
        self.path = path
        self._known = set(known or ())
        self._recent: set[str] = set()
        self._folded: Any = ()  # hashes of older ids written by this run, sorted (numpy, from the first fold)
        self._file = path.open("ab")

    @staticmethod
    def read(path: Path) -> dict[str, TranslationResult]:
        """Results already recorded (see `read_results`)."""
        return read_results(path)

    def holds(self, entry_id: str) -> bool:
        if entry_id in self._known or entry_id in self._recent:
            return True
        if not len(self._folded):
            return False
        import numpy as np

        key = hash(entry_id)
        slot = int(np.searchsorted(self._folded, key))
        return slot < len(self._folded) and self._folded[slot] == key and self._logged(entry_id)

    def append(self, results: list[TranslationResult]) -> None:
        fresh: list[TranslationResult] = []
        again: list[str] = []
        batch: set[str] = set()
        for result in results:
            if result.id in batch or self.holds(result.id):
                again.append(result.id)
            else:
                fresh.append(result)
                batch.add(result.id)
        if again:
            log.warning("%s: not recording %s again", self.path, _ids(again))
        self._file.write(b"".join(_encode(r) + b"\n" for r in fresh))
        self._file.flush()
        self._recent.update(r.id for r in fresh)
        if len(self._recent) >= self.FOLD_AFTER:
            import numpy as np

            hashes = np.sort(np.fromiter((hash(entry_id) for entry_id in self._recent), np.int64,
                                         count=len(self._recent)))
            # merged into the sorted array in one pass (sorting the whole array again at every fold made a
            # million-entry run spend most of a minute here); a hash two ids share is kept twice, which is harmless
            self._folded = (np.insert(self._folded, np.searchsorted(self._folded, hashes), hashes)
                            if len(self._folded) else hashes)
            self._recent.clear()

    def _logged(self, entry_id: str) -> bool:
        """Whether the log holds a result for ``entry_id`` (read from the file: rare, on a hash found)."""
        self._file.flush()
        with self.path.open("rb") as file:
            for line in file:
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                    if _decode_id(line).id == entry_id:
                        return True
        return False

    def close(self) -> None:
        self._file.close()
        self._recent, self._folded = set(), ()  # the finished run reads the log back instead


class IdOnly(msgspec.Struct):
    """A logged result read for its id alone."""

    id: str


_decode_id = msgspec.json.Decoder(IdOnly).decode
