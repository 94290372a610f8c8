"""The texts of a corpus the check compares against: each entry's source and its gold texts.

A corpus file is read with the corpus reader's public `read_corpus` (every format and alias it accepts
works here); `mt-eval run` hands over the corpus it has already read, so a corpus read with ``--columns``,
accepted doubts or as parallel text is checked as the run read it. Gold texts are ``reference``,
``references`` and whatever the corpus's ``dataset.gold_fields`` lists: all are the "reference" side.

The entries are only ever iterated in order, a part at a time (`EntryStream`, `PartTexts`): the texts of
a whole corpus are never held at once, and a corpus whose entries are read from disk on demand is read
once per pass. Which entry and side a text comes from is kept in compact arrays; an entry's id is kept
for the entries of the part being checked only.
"""

from __future__ import annotations

import collections
import itertools
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

SOURCE, REFERENCE = 0, 1
SIDES = ("source", "reference")
BATCH_TEXTS = 20_000


@dataclass
class CorpusTexts:
    """One corpus as the check sees it: its entries (a sequence, iterated in order) and its gold fields."""

    path: Path
    name: str
    sha256: str
    entries: Sequence[dict[str, Any]]
    gold: list[str]

    def texts(self, entry: Mapping[str, Any]) -> tuple[bool, list[str]]:
        """Whether ``entry`` has a source, and its texts: the source first, then each gold text."""
        source = entry.get("source")
        found = [source] if isinstance(source, str) else []
        for field in self.gold:
            value = entry.get(field)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, list):
                found.extend(text for text in value if isinstance(text, str))
        return isinstance(source, str), found


class CorpusUnreadable(Exception):
    """A corpus could not be read; the message says where and why."""


def load_corpus(source: str | Path | Any) -> CorpusTexts:
    """Read a corpus file, or the `mt_eval.corpus.CorpusSpec` the shared corpus flags describe, with the
    corpus reader."""
    from mt_eval.corpus import read_corpus
    from mt_eval.problems import ProblemsError

    path = source if isinstance(source, str | Path) else (source.path or source.source_file)
    try:
        corpus = read_corpus(source)
    except ProblemsError as exc:
        raise CorpusUnreadable(str(exc)) from exc
    except OSError as exc:
        raise CorpusUnreadable(f"cannot read corpus {path}: {exc.strerror or exc}") from exc
    return texts_of(corpus)


def texts_of(corpus: Any) -> CorpusTexts:
    """A corpus already read (a `mt_eval.corpus.Corpus`) as the check sees it; nothing is copied."""
    from mt_eval.gold import corpus_gold_fields

    try:
        gold = sorted(corpus_gold_fields(corpus.dataset))
    except ValueError as exc:
        raise CorpusUnreadable(f"{corpus.path}: {exc}") from exc
    from mt_eval.lone_surrogates import writable

    # (a name that is not UTF-8 is shown with its escapes: hits, the control and the report name the corpus by it)
    return CorpusTexts(path=Path(corpus.path), name=writable(Path(corpus.path).name), sha256=corpus.sha256,
                       entries=corpus.entries, gold=gold)


class EntryStream:
    """One pass over the entries of several corpora, in order, taken a number of entries at a time."""

    def __init__(self, corpora: Sequence[CorpusTexts]) -> None:
        self._corpora = corpora
        self._corpus, self._position = 0, 0
        self._entries: Iterator[Mapping[str, Any]] = iter(corpora[0].entries) if corpora else iter(())

    def take(self, count: int | None) -> Iterator[tuple[int, int, Iterator[Mapping[str, Any]]]]:
        """The next ``count`` entries (None: all that are left), as runs within one corpus: ``(corpus number,
        position of the run's first entry, its entries)``; read each run to its end before the next."""
        while self._corpus < len(self._corpora) and (count is None or count > 0):
            left = len(self._corpora[self._corpus].entries) - self._position
            size = left if count is None else min(count, left)
            yield self._corpus, self._position, itertools.islice(self._entries, size)
            self._position += size
            count = None if count is None else count - size
            if self._position >= len(self._corpora[self._corpus].entries):
                self._corpus, self._position = self._corpus + 1, 0
                if self._corpus < len(self._corpora):
                    self._entries = iter(self._corpora[self._corpus].entries)

    def skip(self, count: int) -> None:
        """Read past the next ``count`` entries."""
        for _corpus, _first, entries in self.take(count):
            collections.deque(entries, maxlen=0)


class PartTexts:
    """The texts of a run of consecutive entries, given in batches; who owns each text is recorded as they
    are read (complete once `batches` is exhausted): ``text_entry`` (the entry's number in the part),
    ``text_side``, and per entry its ``entry_ids``, ``entry_corpus`` and ``entry_position``."""

    def __init__(self, corpora: Sequence[CorpusTexts],
                 runs: Iterator[tuple[int, int, Iterator[Mapping[str, Any]]]]) -> None:
        self.corpora = list(corpora)
        self._runs = runs
        self.entry_ids: list[str] = []
        self.entry_corpus = np.zeros(0, np.int32)
        self.entry_position = np.zeros(0, np.int64)
        self.text_entry = np.zeros(0, np.int32)
        self.text_side = np.zeros(0, np.int8)

    def batches(self) -> Iterator[list[str]]:
        """The texts, ``BATCH_TEXTS`` at a time."""
        counts, sourced = array("i"), array("b")  # per entry: texts, and whether the first is its source
        runs: list[tuple[int, int, int]] = []
        ids, batch = self.entry_ids, []
        for corpus, first, entries in self._runs:
            texts, before = self.corpora[corpus].texts, len(ids)
            for entry in entries:
                ids.append(str(entry["id"]))
                has_source, found = texts(entry)
                counts.append(len(found))
                sourced.append(has_source)
                batch += found
                if len(batch) >= BATCH_TEXTS:
                    yield batch
                    batch = []
            runs.append((corpus, first, len(ids) - before))
        if batch:
            yield batch
        self._settle(runs, np.frombuffer(counts, np.int32), np.frombuffer(sourced, np.int8).astype(bool))

    def _settle(self, runs: list[tuple[int, int, int]], counts: np.ndarray, sourced: np.ndarray) -> None:
        """The owner arrays, from each run of entries and each entry's count of texts."""
        sizes = np.array([size for _corpus, _first, size in runs], np.int64)
        self.entry_corpus = np.repeat(np.array([corpus for corpus, _first, _size in runs], np.int32), sizes)
        run_starts = np.cumsum(sizes) - sizes
        self.entry_position = (np.arange(len(counts), dtype=np.int64) - np.repeat(run_starts, sizes) +
                               np.repeat(np.array([first for _corpus, first, _size in runs], np.int64), sizes))
        self.text_entry = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        self.text_side = np.full(len(self.text_entry), REFERENCE, np.int8)
        firsts = np.cumsum(counts, dtype=np.int64) - counts
        self.text_side[firsts[sourced]] = SOURCE

    def owner(self, text: int) -> tuple[int, str, str]:
        """``(corpus number, entry id, side)`` of text number ``text``."""
        entry = int(self.text_entry[text])
        return int(self.entry_corpus[entry]), self.entry_ids[entry], SIDES[self.text_side[text]]

    def text(self, number: int) -> str:
        """Text number ``number`` read back from its corpus (one entry read)."""
        entry = int(self.text_entry[number])
        corpus = self.corpora[int(self.entry_corpus[entry])]
        slot = number - int(np.searchsorted(self.text_entry, entry))
        return corpus.texts(corpus.entries[int(self.entry_position[entry])])[1][slot]

    def texts_per_corpus(self) -> np.ndarray:
        """How many texts each corpus has in this part."""
        return np.bincount(self.entry_corpus[self.text_entry], minlength=len(self.corpora))


class EntryIds(Sequence[str]):
    """The entry ids of a corpus's texts, by text number: ``positions`` are the texts' entries (filled in as
    the texts are read), and an id is read from the corpus only when asked for."""

    def __init__(self, corpus: CorpusTexts, positions: array[int]) -> None:
        self._corpus = corpus
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, number: int) -> str: ...

    @overload
    def __getitem__(self, number: slice) -> Sequence[str]: ...

    def __getitem__(self, number: int | slice) -> str | Sequence[str]:
        if isinstance(number, slice):
            return [self[i] for i in range(*number.indices(len(self)))]
        return str(self._corpus.entries[self._positions[number]]["id"])
