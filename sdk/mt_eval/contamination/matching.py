"""Finding corpus texts in a document: candidates from the n-gram index, verified word by word.

A document (a file, an archive member, or the texts of a corpus) arrives as pieces of text; they are
tokenised in chunks of about a mebibyte, each chunk carrying over the last words of the one before so a
text split across the boundary is still seen whole. For each chunk:

1. the index gives every rare n-gram of the chunk that some corpus unit has;
2. matches of one unit close together form a cluster; a cluster with fewer shared n-grams than the unit
   needs for any kind of hit (`CheckSettings.required_grams`) is dropped without further work;
3. each remaining cluster is aligned with the unit word by word (`difflib.SequenceMatcher` over word ids,
   in a window the unit's length either side), which gives the longest shared run and the coverage; the
   thresholds then decide whether it is an exact match, a near-duplicate, a long shared n-gram, or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

import numpy as np

from mt_eval.contamination.index import CorpusIndex
from mt_eval.contamination.normalize import TokenStream, empty_stream, tokenize_pieces
from mt_eval.contamination.report import Hit, HitKind

CHUNK_CHARS = 1 << 20
MAX_CARRY_WORDS = 4096
SNIPPET_CHARS = 240
_RANK = {"exact": 3, "near-duplicate": 2, "long-ngram": 1}


@dataclass
class Document:
    """Text to check, as ``(line, text)`` pieces.

    ``locator`` says what the numbers are: lines, byte offsets (text found inside a binary file) or, for
    a corpus compared with a corpus, indexes into ``entry_ids`` (all of side ``side``).
    """

    name: str
    pieces: Iterable[tuple[int, str]]
    locator: Literal["line", "byte", "entry"] = "line"
    entry_ids: Sequence[str] = ()
    side: Literal["source", "reference"] | None = None


@dataclass
class Match:
    """One unit found at words ``start``..``stop`` of a document."""

    unit: int
    start: int
    stop: int
    line: int
    kind: HitKind
    coverage: float
    longest_run: int
    matched: str

    def better_than(self, other: Match) -> bool:
        return (_RANK[self.kind], self.coverage, self.longest_run) > (_RANK[other.kind], other.coverage,
                                                                       other.longest_run)


@dataclass
class Matcher:
    """Scans documents against one index; counts what it read."""

    index: CorpusIndex
    words_read: int = 0
    _carry_words: int = field(init=False)

    def __post_init__(self) -> None:
        self._carry_words = min(self.index.max_length + self.index.settings.ngram, MAX_CARRY_WORDS)

    def scan(self, document: Document) -> list[Hit]:
        """Every hit in ``document``: at most one per unit and place, the best kind kept."""
        return [hit for _start, _key, hit in self.located(document)]

    def located(self, document: Document) -> list[tuple[int, int, Hit]]:
        """`scan`'s hits, each with the word it starts at and its unit's key (`CorpusIndex.unit_keys`): what
        merging the hits of several parts of an index orders by."""
        best: dict[int, list[Match]] = {}
        carry, offset = empty_stream(), 0
        apart = document.locator == "entry"  # (a corpus's entries are texts of their own: no match runs across two)
        for pieces in _chunks(document.pieces):
            stream = carry.then(tokenize_pieces(pieces, self.index.lookup))
            self.words_read += len(stream) - len(carry)
            for match in self.matches(stream):
                if apart and stream.lines[match.start] != stream.lines[match.stop - 1]:
                    continue
                match.start += offset
                match.stop += offset
                _keep_best(best.setdefault(match.unit, []), match)
            keep = min(len(stream), self._carry_words)
            offset += len(stream) - keep
            carry = stream.tail(keep)
        found = sorted((match for matches in best.values() for match in matches), key=lambda m: (m.start, m.unit))
        keys = self.index.unit_keys
        return [(match.start, int(keys[match.unit]), hit) for match in found for hit in self._hits(document, match)]

    def matches(self, stream: TokenStream) -> Iterator[Match]:
        """Matches in one tokenised chunk (positions relative to the chunk)."""
        yield from self._short_matches(stream)
        positions, units, offsets = self.index.long_matches(stream.ids)
        if not len(positions):
            return
        order = np.lexsort((positions, units))
        positions, units, offsets = positions[order], units[order], offsets[order]
        n = self.index.settings.ngram
        new_cluster = np.ones(len(units), bool)
        new_cluster[1:] = (units[1:] != units[:-1]) | (positions[1:] - positions[:-1] >
                                                       self.index.lengths[units[1:]] + n)
        firsts = np.flatnonzero(new_cluster)
        stops = np.concatenate((firsts[1:], [len(units)]))
        cluster_units = units[firsts]
        possible = (_covered(np.cumsum(new_cluster) - 1, offsets, n, len(firsts)) +
                    n * self.index.common_per_unit[cluster_units])
        for first, stop in zip(firsts[possible >= self.index.need_cover[cluster_units]].tolist(),
                               stops[possible >= self.index.need_cover[cluster_units]].tolist(), strict=True):
            yield from self._verify(stream, int(units[first]), positions[first:stop], offsets[first:stop])

    def _short_matches(self, stream: TokenStream) -> Iterator[Match]:
        standalone_below = self.index.settings.standalone_below
        for position, unit in self.index.short_matches(stream.ids):
            length = int(self.index.lengths[unit])
            stop = position + length
            if length < standalone_below and not _stands_alone(stream, position, stop):
                continue
            yield Match(unit=unit, start=position, stop=stop, line=int(stream.lines[position]), kind="exact",
                        coverage=1.0, longest_run=length, matched=_snippet(stream, position, stop))

    def _verify(self, stream: TokenStream, unit: int, positions: np.ndarray, offsets: np.ndarray
                ) -> Iterator[Match]:
        """Matches of ``unit`` in one cluster: each exact occurrence, else the best partial alignment."""
        settings = self.index.settings
        length = int(self.index.lengths[unit])
        unit_ids = self.index.unit_ids(unit)
        exact = False
        for start in np.unique(positions - offsets).tolist():
            stop = start + length
            if start < 0 or stop > len(stream) or not np.array_equal(stream.ids[start:stop], unit_ids):
                continue
            if length < settings.standalone_below and not _stands_alone(stream, start, stop):
                continue
            exact = True
            yield Match(unit=unit, start=start, stop=stop, line=int(stream.lines[start]), kind="exact",
                        coverage=1.0, longest_run=length, matched=_snippet(stream, start, stop))
        if exact or length < min(settings.standalone_below, settings.long_ngram):
            return
        n = settings.ngram
        low, high = max(0, int(positions[0]) - length), min(len(stream), int(positions[-1]) + n + length)
        unit_words, window = unit_ids.tolist(), stream.ids[low:high].tolist()
        blocks = SequenceMatcher(None, unit_words, window, autojunk=False).get_matching_blocks()
        longest = max(blocks, key=lambda b: b.size)
        runs = [b for b in _rebalanced([(b.a, b.b, b.size) for b in blocks[:-1]], unit_words, window, n)
                if b[2] >= n]
        coverage = round(sum(size for _a, _b, size in runs) / length, 4)
        kind: HitKind
        if length >= settings.standalone_below and coverage >= settings.near_duplicate:
            kind, start, stop = "near-duplicate", low + runs[0][1], low + runs[-1][1] + runs[-1][2]
        elif longest.size >= settings.long_ngram:
            kind, start, stop = "long-ngram", low + longest.b, low + longest.b + longest.size
        else:
            return
        yield Match(unit=unit, start=start, stop=stop, line=int(stream.lines[start]), kind=kind,
                    coverage=coverage, longest_run=longest.size, matched=_snippet(stream, start, stop))

    def _hits(self, document: Document, match: Match) -> Iterator[Hit]:
        where: dict[str, object] = {}
        if document.locator == "entry":
            where = {"against_id": document.entry_ids[match.line], "against_side": document.side}
        elif document.locator == "byte":
            where = {"byte": match.line}
        else:
            where = {"line": match.line}
        length = int(self.index.lengths[match.unit])
        for corpus, entry_id, side in self.index.owners(match.unit):
            yield Hit(file=document.name, corpus=self.index.corpora[corpus].name, entry_id=entry_id,
                      side=side, kind=match.kind, coverage=match.coverage,  # type: ignore[arg-type]
                      longest_run=match.longest_run, entry_words=length, matched=match.matched,
                      **where)  # type: ignore[arg-type]


def _covered(cluster: np.ndarray, offsets: np.ndarray, n: int, clusters: int) -> np.ndarray:
    """For each cluster, how many of its unit's words the matched n-grams cover (the union of their spans)."""
    order = np.lexsort((offsets, cluster))
    cluster, offsets = cluster[order], offsets[order]
    distinct = np.ones(len(cluster), bool)
    distinct[1:] = (cluster[1:] != cluster[:-1]) | (offsets[1:] != offsets[:-1])
    cluster, offsets = cluster[distinct], offsets[distinct]
    span = np.full(len(offsets), n, np.int64)
    same = cluster[1:] == cluster[:-1]
    span[:-1][same] = np.minimum(n, offsets[1:][same] - offsets[:-1][same])
    return np.bincount(cluster, weights=span, minlength=clusters).astype(np.int64)


def _rebalanced(blocks: list[tuple[int, int, int]], unit: list[int], window: list[int], n: int
                ) -> list[tuple[int, int, int]]:
    """Matching blocks ``(unit position, window position, size)``, with a block too short to count (under
    ``n`` words) lengthened from its neighbour where the words at their boundary allow it: the greedy
    alignment gives a repeated word to the longer block ("… friend friend blue …" against "… friend blue
    …"), which could leave the rest of the entry in a run too short to count toward its coverage."""
    blocks = list(blocks)
    for k in range(len(blocks) - 1):
        (a1, b1, s1), (a2, b2, s2) = blocks[k], blocks[k + 1]
        if s2 < n <= s1:  # the second one borrows the end of the first
            need = n - s2
            if a2 - need >= a1 and b2 - need >= b1 and unit[a2 - need:a2] == window[b2 - need:b2]:
                kept = min(s1, a2 - need - a1, b2 - need - b1)
                if kept >= n:
                    blocks[k], blocks[k + 1] = (a1, b1, kept), (a2 - need, b2 - need, n)
        elif s1 < n <= s2:  # the first one borrows the start of the second
            need = n - s1
            if a1 + n <= len(unit) and b1 + n <= len(window) and unit[a1 + s1:a1 + n] == window[b1 + s1:b1 + n]:
                cut = max(0, a1 + n - a2, b1 + n - b2)
                if s2 - cut >= n:
                    blocks[k], blocks[k + 1] = (a1, b1, n), (a2 + cut, b2 + cut, s2 - cut)
    return blocks


def _stands_alone(stream: TokenStream, start: int, stop: int) -> bool:
    return bool(stream.breaks[start]) and stream.break_after(stop - 1)


def _snippet(stream: TokenStream, start: int, stop: int) -> str:
    text = stream.text(start, stop)
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS - 1] + "…"


def _keep_best(kept: list[Match], match: Match) -> None:
    """Add ``match`` unless a better one of the same unit overlaps it; drop worse ones it overlaps."""
    overlapping = [m for m in kept if m.start < match.stop and match.start < m.stop]
    if any(not match.better_than(m) for m in overlapping):
        return
    for m in overlapping:
        kept.remove(m)
    kept.append(match)


def _chunks(pieces: Iterable[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    batch: list[tuple[int, str]] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece[1])
        if size >= CHUNK_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
