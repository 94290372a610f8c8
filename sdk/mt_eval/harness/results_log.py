"""``results.jsonl``: one final result per line, appended as entries complete; never an entry twice.

A crash (or a full disk, or a power cut) can leave the last line torn: cut in the middle of a record, or
filled with NUL bytes by a file system that had extended the file before its data reached the disk.
Readers skip such a tail. Before a run appends to a log (``--resume``), `repair` makes it whole again:
a torn tail is truncated, so the next record starts on a line of its own, and a log damaged before its
end (lines that are not results, or entries recorded twice by an older version) is rewritten with every
complete record kept once; what was dropped is reported, and those entries are translated again.
A result for an entry the log already holds is never appended. A decide run's log (`mt_eval.decisions`) is read
and repaired the same way, as a log of another `LogKind`: its rows are decided again.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from mt_eval.atomic_files import write_atomically
from mt_eval.corpus.on_disk import kept
from mt_eval.errors import ExpectedError
from mt_eval.records import TranslationResult, result_problem

log = logging.getLogger("mt_eval.harness")
_encode = msgspec.json.Encoder().encode


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


Result = TypeVar("Result", bound=_Identified)


@dataclass(frozen=True)
class LogKind(Generic[Result]):
    """What a log records (a result a line), what each result is for, and what becomes of a result dropped."""

    result: type[Result]
    one: str = "entry"  # what a result is for: "1 entry (e5)", "line 7 of entry e5"
    many: str = "entries"
    again: str = "translated again"  # what becomes of the entry of a dropped result
    done: str = "translated"  # what was done to the entries whose results are saved
    command: str = "mt-eval run"  # the command whose --resume repairs the log
    problem: Callable[[Result], str | None] | None = None  # why a record the schema accepts is still unusable


TRANSLATIONS = LogKind(TranslationResult, problem=result_problem)


class ResultsNotSaved(ExpectedError):
    """``results.jsonl`` cannot be written (a full disk, a quota, a directory gone): the run stops, with what was
    saved and how to go on."""

    @classmethod
    def writing(cls, path: Path, problem: OSError, kind: LogKind[Any]) -> ResultsNotSaved:
        return cls(f"cannot write {path}: {problem.strerror or problem}; the run stopped. The {kind.many} {kind.done} "
                   "before are saved (a line cut short is dropped): free space, or make the directory writable, then "
                   "continue with the same command and --resume (in place of --force, where it has it)")

    @classmethod
    def repairing(cls, path: Path, problem: OSError, kind: LogKind[Any]) -> ResultsNotSaved:
        return cls(f"cannot repair {path}: {problem.strerror or problem}; it was left as it was, and nothing was "
                   f"{kind.done}: free space, or make the directory writable, then continue with the same command and "
                   "--resume")


class AppendedLines:
    """A run's ``results.jsonl`` as it is appended to: a write that fails (a full disk) raises `ResultsNotSaved`,
    as does every later one (the run stops; what was written before is kept, and what the failed write put down
    of its lines is cut off again, so the file holds whole lines only)."""

    def __init__(self, path: Path, kind: LogKind[Any]) -> None:
        self.path, self.kind = path, kind
        self._failed: ResultsNotSaved | None = None
        self._file = path.open("ab", buffering=0)  # (each write goes down at once, and no buffer outlives a failure)

    def write(self, records: Sequence[Any]) -> None:
        if self._failed is not None:
            raise self._failed
        data = memoryview(b"".join(_encode(r) + b"\n" for r in records))
        end = os.fstat(self._file.fileno()).st_size
        try:
            while data:  # (a write the disk takes only in part says how much it took)
                data = data[self._file.write(data):]
        except OSError as exc:
            with contextlib.suppress(OSError):  # (the lines written before this one are whole and kept)
                os.ftruncate(self._file.fileno(), end)
            self._failed = ResultsNotSaved.writing(self.path, exc, self.kind)
            raise self._failed from exc

    def close(self) -> None:
        self._file.close()


@contextlib.contextmanager
def said_once_if_not_saved() -> Iterator[None]:
    """Around a task group whose workers append to a log: a log that cannot be written, found by several workers
    at once, is the first `ResultsNotSaved` alone, not an exception group."""
    try:
        yield
    except BaseExceptionGroup as failed:
        unsaved, others = failed.split(ResultsNotSaved)
        if unsaved is None or others is not None:
            raise
        first: BaseException = unsaved
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None


@dataclass
class LogScan(Generic[Result]):
    """What a log holds: each entry's first result (or only the ids: `logged_ids`), and what is wrong with the
    rest of it."""

    kind: LogKind[Result]
    results: dict[str, Result] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    duplicates: list[str] = field(default_factory=list)  # ids recorded more than once (the first is kept)
    damaged: list[int] = field(default_factory=list)  # numbers of lines before the end that are not results
    damaged_ids: dict[int, str] = field(default_factory=dict)  # the entry's id, by line number, where one is read
    torn_bytes: int = 0  # bytes after the last complete line that are not a result (a torn write)
    good_end: int = 0  # offset just past the last complete result line
    unterminated: bool = False  # the last result is complete but its newline never reached the disk

    @property
    def needs_rewrite(self) -> bool:
        return bool(self.damaged or self.duplicates)


def _every(result: object) -> bool:
    return True


def _none(result: object) -> bool:
    return False


def scan(path: Path, kind: LogKind[Result], *, keep: Callable[[Result], bool] = _every) -> LogScan[Result]:
    """Read ``path`` (a missing file is an empty log) without changing it, a line at a time. Every id is kept,
    but only the results ``keep`` is true of (a million results would be most of a run's memory)."""
    found = LogScan(kind)
    if not path.exists():
        return found
    decode_result = msgspec.json.Decoder(kind.result).decode
    offset = 0
    number = 0
    damaged_since: int | None = None  # first damaged line not yet followed by a good one
    with path.open("rb") as file:
        for raw in file:
            number += 1
            next_offset = offset + len(raw)
            terminated = raw.endswith(b"\n")
            line = raw[:-1] if terminated else raw
            if line.strip(b" \t\r"):
                try:
                    result = decode_result(line)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    if damaged_since is None:
                        damaged_since = number
                    found.damaged.append(number)
                    with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                        found.damaged_ids[number] = _decode_id(line).id  # a result that cannot be used
                else:
                    if kind.problem is not None and kind.problem(result) is not None:  # whole, but never a run's
                        found.damaged.append(number)  # (a complete line: not a torn tail, wherever it is)
                        found.damaged_ids[number] = result.id
                        damaged_since = None
                        found.good_end, found.unterminated = next_offset, not terminated
                        offset = next_offset
                        continue
                    if damaged_since is not None:
                        damaged_since = None  # the damage is followed by good records: it is not a torn tail
                    if result.id in found.ids:
                        found.duplicates.append(result.id)
                    else:
                        found.ids.add(result.id)
                        if keep(result):
                            found.results[result.id] = result
                    found.good_end = next_offset
                    found.unterminated = not terminated
            offset = next_offset
    if damaged_since is not None:  # everything after the last good record is a torn tail
        found.damaged = [n for n in found.damaged if n < damaged_since]
        found.torn_bytes = offset - found.good_end
    elif found.good_end < offset:
        found.torn_bytes = offset - found.good_end  # blank bytes after the last record
    return found


def read_results(path: Path, keep: Callable[[TranslationResult], bool] = _every) -> dict[str, TranslationResult]:
    """Each entry's result (those ``keep`` is true of), for readers: a torn tail is skipped, an entry recorded
    twice keeps its first result (with a warning naming the ids), a damaged line before the end is an error."""
    return read_logged(path, TRANSLATIONS, keep)


def read_logged(path: Path, kind: LogKind[Result], keep: Callable[[Result], bool] = _every) -> dict[str, Result]:
    """`read_results` for a log of any kind."""
    return _checked(path, scan(path, kind, keep=keep)).results


def logged_ids(path: Path, kind: LogKind[Any] = TRANSLATIONS) -> set[str]:
    """The ids `read_results` would give results for, without holding the results (what resuming needs)."""
    return _checked(path, scan(path, kind, keep=_none)).ids


def _checked(path: Path, found: LogScan[Result]) -> LogScan[Result]:
    kind = found.kind
    if found.damaged:
        raise ValueError(f"{path}: {_damaged(found)} {'is' if len(found.damaged) == 1 else 'are'} not a result; the "
                         f"log is damaged: `{kind.command} ... --resume` repairs it (those {kind.many} are "
                         f"{kind.again})")
    if found.duplicates:
        log.warning("%s records %s more than once; the first result of each is used", path,
                    _ids(found.duplicates, kind))
    return found


def repair(path: Path, entry_ids: Collection[str] | None = None, kind: LogKind[Any] = TRANSLATIONS) -> list[str]:
    """Make the log whole before appending to it; returns what was done, one sentence each. Given the run's
    ``entry_ids``, results for any other id (a log edited, or taken from another run) are dropped too."""
    found = scan(path, kind)
    notes: list[str] = []
    strays = [] if entry_ids is None else [i for i in found.results if i not in entry_ids]
    if found.needs_rewrite or strays:
        for stray in strays:
            del found.results[stray]
        try:  # (a full disk leaves the log as it was, and no part of the new one beside it)
            write_atomically(path, b"".join(_encode(result) + b"\n" for result in found.results.values()))
        except OSError as exc:
            raise ResultsNotSaved.repairing(path, exc, kind) from None
        if strays:
            notes.append(f"{path}: dropped results for {_ids(strays, kind)} that "
                         f"{'is' if len(strays) == 1 else 'are'} no {kind.one} of this run (the log was edited, or "
                         "comes from another run)")
        if found.damaged:
            notes.append(f"{path}: dropped {len(found.damaged)} damaged line(s) ({_damaged(found)}); their "
                         f"{kind.many} are {kind.again}")
        if found.duplicates:
            verb = "was" if len(set(found.duplicates)) == 1 else "were"
            notes.append(f"{path}: {_ids(found.duplicates, kind)} {verb} recorded more than once; kept the first "
                         "result of each")
        if found.torn_bytes:
            notes.append(_torn(path, found))
        return notes
    if found.torn_bytes:
        with path.open("r+b") as file:  # good_end is just past a newline (or 0)
            file.truncate(found.good_end)
        notes.append(_torn(path, found))
    if found.unterminated:
        try:
            with path.open("ab") as file:
                file.write(b"\n")
        except OSError as exc:
            raise ResultsNotSaved.repairing(path, exc, kind) from None
    return notes


def _torn(path: Path, found: LogScan[Any]) -> str:
    return (f"{path}: dropped a torn last line ({found.torn_bytes} bytes, from a run that stopped while writing it); "
            f"its {found.kind.one} is {found.kind.again}")


def _damaged(found: LogScan[Any]) -> str:
    """``line 2, line 7 of entry e5``: the first ten damaged lines, each with its entry where its id was read."""
    one = found.kind.one
    return ", ".join(f"line {n}" + (f" of {one} {found.damaged_ids[n]}" if n in found.damaged_ids else "")
                     for n in found.damaged[:10])


def _ids(ids: list[str], kind: LogKind[Any] = TRANSLATIONS) -> str:
    unique = list(dict.fromkeys(ids))
    shown = ", ".join(unique[:10]) + (f" and {len(unique) - 10} more" if len(unique) > 10 else "")
    return f"{len(unique)} {kind.one if len(unique) == 1 else kind.many} ({shown})"


class ResultsLog:
    """The log of one run, open for appending; ``known`` are ids its file already holds (a resumed run's, read with
    `logged_ids`: a folded id is confirmed by the file).

    The ids written lately are kept as text; every `FOLD_AFTER` of them, and the known ones at once, are folded
    into a sorted array of their hashes (8 bytes an id, not a string and a set slot: a million ids would be most
    of a run's memory). An id whose hash is found there is confirmed by reading the log, so a hash shared by two
    ids loses nothing; `unlogged` confirms any number of them in one reading."""

    FOLD_AFTER = 4_096  # few strings live long, so few memory pools are held by them

    def __init__(self, path: Path, known: Collection[str] = ()) -> None:
        self.path = path
        self._recent: set[str] = set()
        self._folded: Any = ()  # hashes of older ids, sorted (numpy, from the first fold)
        if known:
            self._fold(known)
        self._file = AppendedLines(path, TRANSLATIONS)

    @staticmethod
    def read(path: Path) -> dict[str, TranslationResult]:
        """Results already recorded (see `read_results`)."""
        return read_results(path)

    def holds(self, entry_id: str) -> bool:
        if entry_id in self._recent:
            return True
        if not len(self._folded):
            return False
        import numpy as np

        key = hash(entry_id)
        slot = int(np.searchsorted(self._folded, key))
        return slot < len(self._folded) and self._folded[slot] == key and bool(self._logged_among({entry_id}))

    def unlogged(self, entries: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
        """The entries the log holds no result for, in order (`holds` for each, with one reading of the log for
        all the ids whose hash is folded, however many: not one reading each)."""
        if not self._recent and not len(self._folded):  # nothing logged: all of them, as they are (even on disk)
            return entries
        maybe = self._maybe_folded([str(entry["id"]) for entry in entries])
        logged = self._logged_among(maybe) if maybe else set()
        recent = self._recent
        return kept(entries, lambda entry: (key := str(entry["id"])) not in recent and key not in logged)

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
        self._file.write(fresh)
        self._recent.update(r.id for r in fresh)
        if len(self._recent) >= self.FOLD_AFTER:
            self._fold(self._recent)
            self._recent.clear()

    def _fold(self, ids: Collection[str]) -> None:
        """Fold ``ids`` into the sorted array of hashes."""
        import numpy as np

        hashes = np.sort(np.fromiter((hash(entry_id) for entry_id in ids), np.int64, count=len(ids)))
        # merged into the sorted array in one pass (sorting the whole array again at every fold made a
        # million-entry run spend most of a minute here); a hash two ids share is kept twice, which is harmless
        self._folded = (np.insert(self._folded, np.searchsorted(self._folded, hashes), hashes)
                        if len(self._folded) else hashes)

    def _maybe_folded(self, ids: list[str]) -> set[str]:
        """Those of ``ids`` whose hash is folded: held by the log, unless two ids share the hash."""
        if not len(self._folded) or not ids:
            return set()
        import numpy as np

        hashes = np.fromiter((hash(entry_id) for entry_id in ids), np.int64, count=len(ids))
        slot = np.minimum(np.searchsorted(self._folded, hashes), len(self._folded) - 1)
        return {ids[index] for index in np.flatnonzero(self._folded[slot] == hashes).tolist()}

    def _logged_among(self, candidates: set[str]) -> set[str]:
        """Those of ``candidates`` the log holds a result for, read from the file in one pass (every write is
        flushed as it is made)."""
        found: set[str] = set()
        with self.path.open("rb") as file:
            for line in file:
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                    entry_id = _decode_id(line).id
                    if entry_id in candidates:
                        found.add(entry_id)
                        if len(found) == len(candidates):
                            break
        return found

    def close(self) -> None:
        self._file.close()
        self._recent, self._folded = set(), ()  # the finished run reads the log back instead


class IdOnly(msgspec.Struct):
    """A logged result read for its id alone."""

    id: str


_decode_id = msgspec.json.Decoder(IdOnly).decode
