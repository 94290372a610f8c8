"""A run's results read back from ``results.jsonl`` in corpus order, a chunk at a time.

Once every entry is done, ``mt-eval run`` makes the card, the gate's verdict, the scores and
``predictions.txt`` from passes over the results in corpus order. A million results held as objects would
be most of a run's memory, so `LoggedResults` keeps only where each entry's result is in the log (byte
offset and length: 12 bytes an entry) and decodes a chunk of results at a time when a pass reads them.

An entry's result is found by the hash of its id: the log's ids are hashed once, the entries' ids once,
and the two sorted arrays are matched (numpy). Ids are unique in a corpus; should two of them ever share a
hash, the ids themselves are matched instead. Every result read is checked against its entry's id; a line that
holds an entry's id but not a usable result is an error naming the line and the entry (`--resume` repairs it).
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from mt_eval.corpus.on_disk import read_lines
from mt_eval.harness.results_log import IdOnly
from mt_eval.records import TranslationResult

_CHUNK = 4_096  # results decoded at once
_SPAN = 8 << 20  # bytes read in one go for a chunk whose results lie close together in the log


_decode_id = msgspec.json.Decoder(IdOnly).decode
_decode_result = msgspec.json.Decoder(TranslationResult).decode


class LoggedResults:
    """The results ``log`` holds for ``entries`` (a sequence of corpus entries, in corpus order): iterate it for
    the results in corpus order (entries without a result are skipped), ``len`` for how many there are,
    `aligned` for each entry with its result (or None), ``get(id)`` for one."""

    def __init__(self, log: Path, entries: Sequence[Mapping[str, Any]]) -> None:
        self.path = log
        self._entries = entries
        entry_keys = _id_hashes(entries)
        log_keys, offsets, lengths = _scan_log(log)
        sorted_keys, order = _first_of_each(log_keys)
        if len(np.unique(entry_keys)) != len(entry_keys):
            ids = [str(entry["id"]) for entry in entries]  # two ids share a hash: match the ids themselves
            entry_keys, sorted_keys, order = _exact_keys(ids, log)
        if len(sorted_keys):
            slot = np.minimum(np.searchsorted(sorted_keys, entry_keys), len(sorted_keys) - 1)
            found = sorted_keys[slot] == entry_keys
            record = order[slot]
            self._offset = np.where(found, offsets[record], -1)
            self._length = np.where(found, lengths[record], 0).astype(np.int32)
        else:  # an empty log
            found = np.zeros(len(entry_keys), bool)
            self._offset = np.full(len(entry_keys), -1, np.int64)
            self._length = np.zeros(len(entry_keys), np.int32)
        self._present = np.flatnonzero(found)
        self._hashes: np.ndarray | None = None  # the entries' id hashes, when `excluding` or `get` needs them

    def __len__(self) -> int:
        return len(self._present)

    def __iter__(self) -> Iterator[TranslationResult]:
        for _index, result in self._read(self._present):
            yield result

    def aligned(self) -> Iterator[tuple[Mapping[str, Any], TranslationResult | None]]:
        """Every entry, in corpus order, with its result (None when the log holds none)."""
        entries = iter(self._entries)
        position = 0
        for index, result in self._read(self._present):
            while position < index:
                yield next(entries), None
                position += 1
            entry = next(entries)
            if str(entry["id"]) != result.id:
                raise ValueError(f"{self.path}: the result of entry {entry['id']!r} reads as {result.id!r}; the log "
                                 "changed while it was read")
            yield entry, result
            position += 1
        for entry in entries:
            yield entry, None

    def excluding(self, ids: Iterable[str]) -> LoggedResults:
        """The same results without those of ``ids`` (a run's negative controls, whose errors are refusals)."""
        leave_out = set(ids)
        view = object.__new__(LoggedResults)
        view.__dict__.update(self.__dict__)
        if leave_out:
            hashes = np.fromiter((hash(entry_id) for entry_id in leave_out), np.int64, count=len(leave_out))
            candidates = self._present[np.isin(self._entry_hashes()[self._present], hashes)]
            dropped = [index for index in candidates.tolist() if str(self._entries[index]["id"]) in leave_out]
            view._present = np.setdiff1d(self._present, np.array(dropped, np.int64), assume_unique=True)
        return view

    def get(self, entry_id: str, default: TranslationResult | None = None) -> TranslationResult | None:
        for index in np.flatnonzero(self._entry_hashes() == hash(entry_id)).tolist():
            if self._offset[index] >= 0:
                for _index, result in self._read(np.array([index])):
                    if result.id == entry_id:
                        return result
        return default

    def _entry_hashes(self) -> np.ndarray:
        if self._hashes is None:
            self._hashes = _id_hashes(self._entries)
        return self._hashes

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.get(entry_id) is not None

    def _read(self, indices: np.ndarray) -> Iterator[tuple[int, TranslationResult]]:
        """``(entry index, result)`` for ``indices`` (entries with a result, ascending), a chunk at a time."""
        for start, lines in read_lines(self.path, self._offset[indices], self._length[indices], _CHUNK, span=_SPAN):
            for index, line in zip(indices[start:start + len(lines)].tolist(), lines, strict=True):
                try:
                    result = _decode_result(line)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise self._unusable(index, exc) from None
                yield index, result

    def _unusable(self, index: int, problem: Exception) -> ValueError:
        """The error for the line of entry ``index`` that holds its id but not a usable result: its line number, the
        entry's id, what is wrong, and the fix."""
        offset = int(self._offset[index])
        with self.path.open("rb") as file:
            number = 1 + sum(block.count(b"\n") for block in iter(lambda: file.read(min(1 << 20, offset - file.tell())),
                                                                     b""))
        return ValueError(f"{self.path}: line {number} of entry {self._entries[index]['id']} is not a usable result: "
                          f"{problem}; `mt-eval run ... --resume` repairs the log (that entry is translated again)")


def translated_count(results: LoggedResults | ListedResults) -> int:
    """How many scored entries have a result without an error: what the upstream harness counts before it gives an
    interval (`mt_eval.harness.metric_statistics.UPSTREAM_MIN_SEGMENTS`). An abstention counts: the upstream
    harness knows none, and keeps every result without an error, an empty translation too."""
    from mt_eval.corpus.families import family_of

    return sum(1 for entry, result in results.aligned()
               if family_of(entry) == "scored" and result is not None and result.error is None)


class ScoredSegments:
    """The scored entries' hypotheses and references of a run, chunk by chunk in corpus order (a
    `mt_eval.harness.metric_statistics.SegmentSource`): a failed or abstained entry is an empty hypothesis, and so is an
    entry without a result, unless ``skip_missing`` leaves it out (verifying a card whose run covered part of
    its corpus). A class rather than a closure, so that a scorer process can be sent it."""

    def __init__(self, results: LoggedResults | ListedResults, chunk: int, *, skip_missing: bool = False) -> None:
        self.results = results
        self.chunk = chunk
        self.skip_missing = skip_missing

    def __call__(self) -> Iterator[tuple[list[str], list[list[str]]]]:
        from mt_eval.corpus.families import family_of

        hypotheses: list[str] = []
        references: list[str] = []
        for entry, result in self.results.aligned():
            if family_of(entry) != "scored" or (result is None and self.skip_missing):
                continue
            ok = result is not None and result.error is None and result.predicted is not None
            hypotheses.append(result.predicted if ok else "")  # type: ignore[union-attr,arg-type]
            references.append(entry["reference"])
            if len(hypotheses) == self.chunk:
                yield hypotheses, [references]
                hypotheses, references = [], []
        if hypotheses:
            yield hypotheses, [references]

    def key_at(self, position: int) -> Any:
        """The id of the entry of the ``position``-th segment (from 1)."""
        from mt_eval.corpus.families import family_of

        for entry, result in self.results.aligned():
            if family_of(entry) == "scored" and (result is not None or not self.skip_missing):
                position -= 1
                if not position:
                    return entry["id"]
        raise IndexError("no such segment")

    def listed(self) -> tuple[list[str], list[str]]:
        """Every hypothesis and every reference, as two lists (for extensions' metrics, which take lists)."""
        hypotheses: list[str] = []
        references: list[str] = []
        for chunk, streams in self():  # one reading of the log for both
            hypotheses += chunk
            references += streams[0]
        return hypotheses, references


class ListedResults:
    """Results held in memory (a card that embeds them) matched to ``entries`` by id, read as `LoggedResults`
    reads a log: `aligned` gives each entry, in corpus order, with its result (or None)."""

    def __init__(self, results: Iterable[TranslationResult], entries: Sequence[Mapping[str, Any]]) -> None:
        self._by_id = {str(result.id): result for result in results}
        self._entries = entries

    def aligned(self) -> Iterator[tuple[Mapping[str, Any], TranslationResult | None]]:
        return ((entry, self._by_id.get(str(entry["id"]))) for entry in self._entries)


def pairs(entries: Iterable[Mapping[str, Any]], results: Mapping[str, TranslationResult] | LoggedResults
          ) -> Iterator[tuple[Mapping[str, Any], TranslationResult | None]]:
    """Each entry with its result (or None): read in one pass from a `LoggedResults`, looked up in a mapping."""
    if isinstance(results, LoggedResults):
        return results.aligned()
    return ((entry, results.get(str(entry["id"]))) for entry in entries)


def _id_hashes(entries: Sequence[Mapping[str, Any]]) -> np.ndarray:
    return np.fromiter((hash(str(entry["id"])) for entry in entries), np.int64, count=len(entries))


def _scan_log(log: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hash of each record's id, its offset and its length; lines that are not results are skipped
    (the log was repaired before the run appended to it)."""
    keys, offsets, lengths = array("q"), array("q"), array("q")
    offset = 0
    with log.open("rb") as file:
        for line in file:
            try:
                record = _decode_id(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                pass
            else:
                keys.append(hash(record.id))
                offsets.append(offset)
                lengths.append(len(line))
            offset += len(line)
    return (np.frombuffer(keys, np.int64), np.frombuffer(offsets, np.int64), np.frombuffer(lengths, np.int64))


def _exact_keys(ids: list[str], log: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keys that are positions in ``ids`` rather than hashes (for a corpus two of whose ids share a hash)."""
    position = {entry_id: number for number, entry_id in enumerate(ids)}
    keys = array("q")
    with log.open("rb") as file:
        for line in file:
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                keys.append(position.get(_decode_id(line).id, -1))
    return (np.arange(len(ids), dtype=np.int64), *_first_of_each(np.frombuffer(keys, np.int64)))


def _first_of_each(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys``, sorted, and where each first occurs (an entry recorded twice keeps its first)."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = np.ones(len(sorted_keys), bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return sorted_keys[first], order[first]
