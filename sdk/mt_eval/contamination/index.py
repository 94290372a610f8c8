"""The n-gram index of the corpus texts, and looking a stream of words up in it.

Every corpus text (a source or a reference) is normalised into words; identical texts share one *unit*.
A unit of ``ngram`` or more words contributes each of its n-grams, hashed to 64 bits, to a sorted array
of keys whose postings say which unit has that n-gram and at which word. A shorter unit (``min_words``
up to ``ngram - 1`` words) is one key of its own length: it can only match whole.

Looking up a stream hashes its n-grams the same way (numpy, one pass per n-gram length), drops most
misses with a bit filter, and binary-searches the keys for the rest; n-grams shared by more than
``common_ngram`` units are left out of the lookup. The corpus is tokenised in batches, so building the
index never holds more than a batch of words as Python strings.

One index covers one part of the corpora (`parts`): the texts of a run of consecutive entries. Every
part's index shares one `Lexicon`, so word ids and hashes agree across parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from mt_eval.contamination.corpora import PartTexts
from mt_eval.contamination.normalize import MARK_CODES, PIECE, Vocabulary, joined_items
from mt_eval.contamination.settings import CheckSettings

_MAX_GRAM = 64
_HASH_RNG = np.random.default_rng(0x6D7465)
_MULTIPLIERS = _HASH_RNG.integers(0, 2**64, size=_MAX_GRAM, dtype=np.uint64, endpoint=False) | np.uint64(1)
_LENGTH_SALT = _HASH_RNG.integers(0, 2**64, size=_MAX_GRAM + 1, dtype=np.uint64, endpoint=False)
_WHOLE_TEXT_BASE = np.uint64(0x9E3779B97F4A7C15)
_CHUNK_WORDS = 1 << 18


def gram_hashes(values: np.ndarray, length: int) -> np.ndarray:
    """64-bit hashes of every run of ``length`` consecutive token values (wrapping arithmetic)."""
    count = len(values) - length + 1
    if count <= 0:
        return np.zeros(0, np.uint64)
    hashes = np.full(count, _LENGTH_SALT[length], dtype=np.uint64)
    term = np.empty(count, np.uint64)
    for j in range(length):
        np.multiply(values[j:j + count], _MULTIPLIERS[j], out=term)
        hashes += term
    return hashes


def all_known(ids: np.ndarray, length: int) -> np.ndarray:
    """For every window of ``length`` ids, whether none is unknown (negative)."""
    if len(ids) < length:
        return np.zeros(0, bool)
    unknown = np.concatenate(([0], np.cumsum(ids < 0)))
    known: np.ndarray = (unknown[length:] - unknown[:-length]) == 0
    return known


class BitFilter:
    """A set of 64-bit hashes as bits: no false negatives, a few per cent false positives."""

    def __init__(self, hashes: np.ndarray) -> None:
        bits = max(16, int(np.ceil(np.log2(max(1, len(hashes)) * 32))))
        self._shift = np.uint64(64 - bits)
        self._bits = np.zeros((1 << bits) >> 3, np.uint8)
        for start in range(0, len(hashes), _CHUNK_WORDS):
            slots = hashes[start:start + _CHUNK_WORDS] >> self._shift
            np.bitwise_or.at(self._bits, slots >> np.uint64(3), (1 << (slots & np.uint64(7))).astype(np.uint8))

    def may_contain(self, hashes: np.ndarray) -> np.ndarray:
        slots = hashes >> self._shift
        bits: np.ndarray = (self._bits[slots >> np.uint64(3)] >> (slots & np.uint64(7)).astype(np.uint8)) & 1
        return bits.astype(bool)


class Lexicon:
    """The words of the corpus texts (a `Vocabulary`) and each word's random 64-bit value. Shared by every
    part of an index built in parts: a word has the same id and value in each, so a text hashes alike in
    every part and a part's units sort as they would in one index of everything."""

    def __init__(self) -> None:
        self.lookup = Vocabulary()
        self.values = np.zeros(0, np.uint64)
        self._generator = np.random.default_rng(0x766F63)

    def add(self, found: list[str]) -> np.ndarray:
        """The codes of ``found`` (words and marks), adding new words."""
        lookup = self.lookup
        for word in dict.fromkeys(found):
            lookup.add(word)
        missing = max(1, lookup.words) - len(self.values)
        if missing > 0:  # drawn in order, so the values do not depend on how the words arrived in batches
            self.values = np.concatenate((self.values, self._generator.integers(
                0, 2**64, size=missing, dtype=np.uint64)))
        return np.fromiter(map(lookup.__getitem__, found), dtype=np.int32, count=len(found))


class CorpusIndex:
    """Units (distinct normalised texts), which corpus texts each stands for, and their n-gram keys."""

    def __init__(self, part: PartTexts, settings: CheckSettings, lexicon: Lexicon | None = None) -> None:
        self.settings = settings
        self.part = part
        self.corpora = part.corpora
        self.lexicon = lexicon or Lexicon()
        self.lookup = self.lexicon.lookup
        tokens, lengths = self._tokenize(part.batches())
        self.texts = len(lengths)
        self._build_units(tokens, lengths)
        del tokens, lengths
        self._index_long_units()
        self._index_short_units()

    @property
    def values(self) -> np.ndarray:
        """The 64-bit value of every word id (of the shared lexicon: it only grows)."""
        return self.lexicon.values

    def _tokenize(self, batches: Iterable[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        """All the part's texts' word ids, concatenated, and each text's length in words."""
        token_parts, length_parts = [], []
        for batch in batches:
            codes = self.lexicon.add(joined_items(batch))
            is_word = codes >= 0
            text_of_item = np.cumsum(codes == MARK_CODES[PIECE])
            token_parts.append(codes[is_word])
            length_parts.append(np.bincount(text_of_item[is_word], minlength=len(batch)))
        if not token_parts:
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        return np.concatenate(token_parts), np.concatenate(length_parts).astype(np.int64)

    def _build_units(self, tokens: np.ndarray, lengths: np.ndarray) -> None:
        """Identical texts (by a hash of all their words) become one unit; short texts are left out."""
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        long_enough = lengths >= self.settings.min_words
        self.too_short = int((~long_enough).sum())
        checked = np.flatnonzero(long_enough)
        whole = np.zeros(len(lengths), np.uint64)
        if len(tokens):
            powers = np.cumprod(np.full(int(lengths.max()) + 1, _WHOLE_TEXT_BASE, np.uint64))
            for head, stop, offset, words in _runs(starts, lengths):
                weighted = self.values[tokens[offset:offset + words]]
                weighted *= powers[np.arange(words) - np.repeat(starts[head:stop] - offset, lengths[head:stop])]
                nonempty = lengths[head:stop] > 0
                if nonempty.any():
                    whole[head:stop][nonempty] = np.add.reduceat(weighted, (starts[head:stop] - offset)[nonempty])
            whole += _LENGTH_SALT[np.minimum(lengths, _MAX_GRAM)] * lengths.astype(np.uint64)
        self.unit_keys, first, inverse = np.unique(whole[checked], return_index=True, return_inverse=True)
        del whole
        unit_texts = checked[first]
        self.lengths = lengths[unit_texts]
        self.starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.int64)
        self.tokens = np.empty(int(self.lengths.sum()), np.int32)
        for head, stop, offset, words in _runs(self.starts, self.lengths):
            sources = starts[unit_texts[head:stop]] - (self.starts[head:stop] - offset)
            self.tokens[offset:offset + words] = tokens[np.repeat(sources, self.lengths[head:stop]) +
                                                        np.arange(words)]
        order = np.argsort(inverse, kind="stable")
        self.owner_texts = checked[order]  # texts grouped by unit
        self.owner_first = np.concatenate(([0], np.cumsum(np.bincount(inverse, minlength=len(unit_texts)))))
        self.max_length = int(self.lengths.max()) if len(self.lengths) else 0

    @property
    def units(self) -> int:
        return len(self.lengths)

    def owners(self, unit: int) -> list[tuple[int, str, str]]:
        """``(corpus number, entry id, side)`` of every corpus text the unit stands for."""
        texts = self.owner_texts[self.owner_first[unit]:self.owner_first[unit + 1]]
        return [self.part.owner(t) for t in texts.tolist()]

    def unit_ids(self, unit: int) -> np.ndarray:
        start = int(self.starts[unit])
        return self.tokens[start:start + int(self.lengths[unit])]

    def _index_long_units(self) -> None:
        n = self.settings.ngram
        gram_counts = np.maximum(self.lengths - n + 1, 0)
        gram_starts = np.cumsum(gram_counts) - gram_counts
        unit_of = np.repeat(np.arange(self.units, dtype=np.int32), gram_counts)
        post_pos = np.arange(len(unit_of), dtype=np.int32)
        post_pos -= np.repeat(gram_starts.astype(np.int32), gram_counts)
        hashes = np.empty(len(unit_of), np.uint64)
        for head, stop, offset, words in _runs(self.starts, self.lengths):
            grams = slice(int(gram_starts[head]), int(gram_starts[stop - 1] + gram_counts[stop - 1]))
            if grams.stop > grams.start:
                chunk = gram_hashes(self.values[self.tokens[offset:offset + words]], n)
                hashes[grams] = chunk[self.starts[unit_of[grams]] - offset + post_pos[grams]]
        order = np.argsort(hashes)
        hashes = hashes[order]
        post_unit = unit_of[order]
        del unit_of
        post_pos = post_pos[order]
        del order
        new_key = np.ones(len(hashes), bool)
        new_key[1:] = hashes[1:] != hashes[:-1]
        firsts = np.flatnonzero(new_key)
        del new_key
        keys = hashes[firsts]
        del hashes
        key_first = np.append(firsts, len(post_unit))
        del firsts
        counts = np.diff(key_first)
        common = counts > self.settings.common_ngram
        self.common_grams = int(common.sum())
        if self.common_grams:
            common_postings = np.repeat(common, counts)
            self.common_per_unit = np.bincount(post_unit[common_postings], minlength=self.units)
            keys, key_first = keys[~common], np.concatenate(([0], np.cumsum(counts[~common])))
            post_unit, post_pos = post_unit[~common_postings], post_pos[~common_postings]
        else:
            self.common_per_unit = np.zeros(self.units, np.int64)
        rare_per_unit = np.bincount(post_unit, minlength=self.units)
        self.keys, self.key_first = keys, key_first.astype(np.int64)
        self.post_unit, self.post_pos = post_unit, post_pos
        self.filter = BitFilter(self.keys)
        self.need_cover = np.array([self.settings.required_cover(length) for length in range(self.max_length + 1)],
                                   dtype=np.int64)[self.lengths]
        self.uncheckable = int(((self.lengths >= n) & (rare_per_unit == 0)).sum())

    def _index_short_units(self) -> None:
        """Units under ``ngram`` words: one key each, looked up by their own length."""
        self.short: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for length in range(self.settings.min_words, self.settings.ngram):
            units = np.flatnonzero(self.lengths == length)
            if not len(units):
                continue
            values = self.values[self.tokens[self.starts[units][:, None] + np.arange(length)]]
            hashes = np.full(len(units), _LENGTH_SALT[length], dtype=np.uint64)
            for j in range(length):
                hashes += values[:, j] * _MULTIPLIERS[j]
            order = np.argsort(hashes, kind="stable")
            self.short[length] = (hashes[order], units[order].astype(np.int32))

    def long_matches(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(stream position, unit, position in unit)`` of every rare n-gram of ``ids`` found in the index."""
        n = self.settings.ngram
        hashes = gram_hashes(self.values[np.maximum(ids, 0)], n)
        if not len(hashes) or not len(self.keys):
            return _no_matches()
        positions = np.flatnonzero(self.filter.may_contain(hashes) & all_known(ids, n))
        hashes = hashes[positions]
        slot = np.minimum(np.searchsorted(self.keys, hashes), len(self.keys) - 1)
        found = self.keys[slot] == hashes
        positions, slot = positions[found], slot[found]
        counts = self.key_first[slot + 1] - self.key_first[slot]
        total = int(counts.sum())
        offsets = np.repeat(self.key_first[slot] - np.cumsum(counts) + counts, counts) + np.arange(total)
        return np.repeat(positions, counts), self.post_unit[offsets], self.post_pos[offsets]

    def short_matches(self, ids: np.ndarray) -> list[tuple[int, int]]:
        """``(stream position, unit)`` of every short unit found whole in ``ids`` (hash and words equal)."""
        found: list[tuple[int, int]] = []
        values = self.values[np.maximum(ids, 0)]
        for length, (keys, units) in self.short.items():
            hashes = gram_hashes(values, length)
            if not len(hashes):
                continue
            slot = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
            for position in np.flatnonzero((keys[slot] == hashes) & all_known(ids, length)).tolist():
                unit = int(units[slot[position]])
                if np.array_equal(ids[position:position + length], self.unit_ids(unit)):
                    found.append((position, unit))
        return found


def _runs(starts: np.ndarray, lengths: np.ndarray) -> Iterator[tuple[int, int, int, int]]:
    """Consecutive texts (or units) stored one after another, a few at a time: ``(first, stop, offset,
    words)`` of each run of about `_CHUNK_WORDS` words, so that work on their words needs little memory."""
    first, count = 0, len(lengths)
    while first < count:
        stop = max(first + 1, int(np.searchsorted(starts, starts[first] + _CHUNK_WORDS, side="left")))
        stop = min(stop, count)
        offset = int(starts[first])
        yield first, stop, offset, int(starts[stop - 1] + lengths[stop - 1]) - offset
        first = stop


def _no_matches() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)
