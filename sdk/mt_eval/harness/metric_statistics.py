"""A metric's per-segment sufficient statistics, and what is computed from them: its corpus score and bootstrap
interval (`scored`), and the weighted sums of statistics that a resample, a paired test's resample or a
randomization trial scores (`weighted_sums`). `mt_eval.harness.scoring` scores a corpus with them, in this
process or in worker processes (`mt_eval.harness.scorer_processes`).

A resample is a vector of counts over the segments, and its score is computed from the weighted sum of the
statistics (``counts @ stats``), never by re-running ``corpus_score``. Resamples are drawn in chunks, so memory
stays bounded for any corpus size. ``fast`` draws are numpy multinomial counts with a seed of its own per
metric, the interval numpy's percentiles; ``upstream`` draws are the upstream harness's exactly (the module
docstring of `mt_eval.harness.scoring`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any, Literal

import msgspec

CONFIDENCE = 0.95
# Fewer resamples give no 95% interval worth the name (one resample is an "interval" of one point, which may
# not even hold the score): --resamples, compare --bootstrap and decide --resamples take at least this many.
MIN_RESAMPLES = 10
# More resamples narrow no interval (they only pin its ends more finely) while scoring takes time in proportion to
# resamples × entries: a mistyped 100000000 ran for hours with nothing shown. The same options take at most this many.
MAX_RESAMPLES = 100_000
_CHUNK_CELLS = 1_000_000  # resamples × segments drawn at once (8 bytes a count)
_KEPT_CELLS = 8_000_000  # resamples × segments kept (a byte a count) to be summed in one pass over the statistics
_KEPT_RESAMPLES = 32  # resamples summed in one pass at most (their counts made float32 a block of segments at a time)
_COUNT_STATISTICS = ("CHRF", "BLEU")  # metrics whose segment statistics are whole counts
_SUM_BLOCK = 65_536  # segments whose float32 statistics are summed at once
_EXACT_IN_FLOAT32 = 2**23  # whole-number sums below it are exact in float32, whatever the order of the additions
Bootstrap = Literal["fast", "upstream"]
UPSTREAM_ALPHA = 0.05  # the upstream harness's interval: 1 - alpha
# The upstream harness reports no interval when fewer entries have a result without an error (an abstention counts:
# it knows none), however many failed entries score beside them as empty translations: every resample of one is
# that one, and its "interval" a point that reads as precision the data cannot support.
UPSTREAM_MIN_SEGMENTS = 2

Segments = Iterator[tuple[list[str], list[list[str]]]]  # (hypotheses, reference streams) chunk by chunk
SegmentSource = Callable[[], Segments]  # a fresh pass over the segments each time it is called


class MetricScore(msgspec.Struct, kw_only=True):
    """One corpus-level metric with its sacrebleu signature and 95% bootstrap interval."""

    name: str
    score: float
    signature: str
    ci_low: float | None = None
    ci_high: float | None = None
    higher_is_better: bool = True


def scored(name: str, metric: Any, stats: Any, resamples: int, seed: tuple[int, int],
           bootstrap: Bootstrap = "fast", translated: int | None = None) -> MetricScore:
    """A metric's score from its segments' statistics, with its interval. ``translated``: how many of the segments
    are of entries with a result without an error, abstentions too (None: all of them), which ``upstream`` needs 2
    of for an interval."""
    import numpy as np

    total = metric._compute_score_from_stats(stats.sum(axis=0, dtype=np.float64)).score
    low = high = None
    if resamples > 0 and bootstrap == "upstream":
        if (stats.shape[0] if translated is None else translated) >= UPSTREAM_MIN_SEGMENTS:
            low, high = upstream_interval(metric, stats, resamples, seed[0])
    elif resamples > 0:
        low, high = _interval(metric, stats, resamples, np.random.default_rng(list(seed)))
    return MetricScore(name=name, score=round(float(total), 4), signature=str(metric.get_signature()),
                       ci_low=low, ci_high=high, higher_is_better=higher_is_better(name))


def higher_is_better(name: str) -> bool:
    """Whether a higher score of the built-in metric ``name`` is the better one (TER counts edits: lower is)."""
    return name != "TER"


class CountsTooLarge(ValueError):
    """A segment's count does not fit the 2 bytes of the array given to `statistics_of`."""


def statistics_width(metric: Any) -> tuple[int, Any]:
    """How many statistics ``metric`` has per segment, and the dtype `statistics_of` keeps them in."""
    import numpy as np

    width = len(metric._extract_corpus_statistics(["a"], [["a"]])[0])
    return width, np.uint16 if type(metric).__name__ in _COUNT_STATISTICS else np.float64


def statistics_of(metric: Any, segments: Segments, count: int, out: Any = None) -> Any:
    """The statistics of ``count`` segments read chunk by chunk. chrF's and BLEU's are whole counts: kept as
    uint16 while they fit (2 bytes a statistic), as float32 beyond (exact up to 2**24); others (TER's averaged
    reference lengths) as float64. Sums are taken in float64. ``out``: the array to fill (`statistics_width`);
    `CountsTooLarge` when a count does not fit it."""
    import numpy as np

    counts = type(metric).__name__ in _COUNT_STATISTICS
    stats = out  # filled chunk by chunk: never the chunks and their concatenation at once
    filled = 0
    for hypotheses, references in segments:
        if not hypotheses:
            continue
        chunk = np.asarray(metric._extract_corpus_statistics(hypotheses, references), dtype=np.float64)
        if stats is None:
            stats = np.empty((count, chunk.shape[1]), np.uint16 if counts else np.float64)
        if stats.dtype == np.uint16 and chunk.max(initial=0) > np.iinfo(np.uint16).max:
            if out is not None:
                raise CountsTooLarge(f"a count of {chunk.max():.0f} does not fit 2 bytes")
            stats = stats.astype(np.float32)  # a segment too long for 2 bytes a count
        if filled + len(chunk) > count:
            raise ValueError(f"more than the {count} segments announced")
        stats[filled:filled + len(chunk)] = chunk
        filled += len(chunk)
    if stats is None or filled != count:
        raise ValueError(f"{filled} segments read, {count} announced")
    return stats


def _interval(metric: Any, stats: Any, resamples: int, rng: Any) -> tuple[float, float]:
    return _percentile_interval(stats, resamples, rng, lambda summed: metric._compute_score_from_stats(summed).score)


def _percentile_interval(stats: Any, resamples: int, rng: Any, value_of: Any) -> tuple[float, float]:
    """The 95% percentile interval of ``value_of(counts @ stats)`` over multinomial resamples of the segments,
    drawn in chunks so memory stays bounded."""
    import numpy as np

    values = [value_of(summed) for summed in resampled_sums(stats, resamples, rng)]
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return round(float(low), 4), round(float(high), 4)


def resampled_sums(stats: Any, resamples: int, rng: Any) -> Iterator[Any]:
    """``counts @ stats`` for each of ``resamples`` multinomial resamples of the segments, in the order drawn,
    summed many resamples to a pass over the statistics (`kept_counts`) — one pass per resample made a million
    segments' intervals cost as much as their statistics. How they are grouped changes nothing: the draws and
    the sums are exact."""
    import numpy as np

    segments = stats.shape[0]
    uniform = np.full(segments, 1.0 / segments)
    drawn_at_once = max(1, _CHUNK_CELLS // segments)
    drawn = (rng.multinomial(segments, uniform, size=min(drawn_at_once, resamples - start))
             for start in range(0, resamples, drawn_at_once))
    for counts in kept_counts(drawn, segments, resamples, drawn_at_once):
        yield from weighted_sums(counts, stats)


def kept_counts(drawn: Iterator[Any], segments: int, resamples: int, drawn_at_once: int) -> Iterator[Any]:
    """The resamples' counts (resamples × segments, ``drawn_at_once`` rows at a time from ``drawn``, taken only
    as needed) in batches of up to `_KEPT_RESAMPLES` resamples (`_KEPT_CELLS` counts), kept as bytes. A segment
    is drawn more than 255 times only in a tiny corpus: such rows go on as drawn."""
    import numpy as np

    kept_at_once = max(drawn_at_once, min(_KEPT_RESAMPLES, _KEPT_CELLS // segments))
    kept = np.empty((min(resamples, kept_at_once), segments), np.uint8)
    filled = 0
    for counts in drawn:
        too_many = counts.max() > 255
        if filled and (too_many or filled + len(counts) > len(kept)):
            yield kept[:filled]
            filled = 0
        if too_many:
            yield counts
            continue
        kept[filled:filled + len(counts)] = counts
        filled += len(counts)
    if filled:
        yield kept[:filled]


def weighted_sums(counts: Any, stats: Any, minus: Any = None) -> Any:
    """``counts @ stats`` (``counts @ (stats − minus)`` given ``minus``) in float64, exactly, a block of segments at
    a time (the counts are converted a block at a time too). Whole-count statistics (uint16, float32) are summed
    in float32 where that is exact — every partial sum a whole number below 2**23, which is checked: by the
    block's sums for non-negative counts and statistics, by its weights times its absolute differences for a
    difference — and a block beyond it again in float64, rather than widened to float64 whole."""
    import numpy as np

    summed = np.zeros((counts.shape[0], stats.shape[1]))
    whole = stats.dtype != np.float64 and (minus is None or minus.dtype != np.float64)
    for start in range(0, stats.shape[0], _SUM_BLOCK):
        block = slice(start, start + _SUM_BLOCK)
        if whole:
            part = _exact_in_float32(counts[:, block], stats[block], None if minus is None else minus[block])
            if part is not None:
                summed += part
                continue
        values = stats[block].astype(np.float64)
        if minus is not None:
            values = values - minus[block].astype(np.float64)
        summed += counts[:, block].astype(np.float64) @ values
    return summed


def _exact_in_float32(counts: Any, stats: Any, minus: Any) -> Any:
    """A block's ``counts @ stats`` (less ``minus``) in float32, or None where float32 would not be exact."""
    import numpy as np

    weights = counts.astype(np.float32)
    if minus is None:
        part = np.dot(weights, stats.astype(np.float32, copy=False))
        return part if part.max(initial=0) < _EXACT_IN_FLOAT32 else None
    values = stats.astype(np.float32) - minus.astype(np.float32)
    bound = np.abs(values).sum(axis=0, dtype=np.float64).max(initial=0) * weights.max(initial=0)
    return np.dot(weights, values) if bound < _EXACT_IN_FLOAT32 else None


def upstream_draws(segments: int, resamples: int, seed: int) -> Iterator[list[int]]:
    """The upstream harness's resamples, each a list of ``segments`` indices: ``random.Random(seed)``, then
    ``randint(0, segments - 1)`` for every place of every resample, in order."""
    rng = random.Random(seed)
    last = segments - 1
    for _ in range(resamples):
        yield [rng.randint(0, last) for _ in range(segments)]


def upstream_interval(metric: Any, stats: Any, resamples: int, seed: int) -> tuple[float, float]:
    """The interval the upstream harness reports: its draws (`upstream_draws`), each resample scored from its
    summed segment statistics, the sorted scores read at its two positions, rounded to 4 places."""
    import numpy as np

    segments = stats.shape[0]
    values = sorted(metric._compute_score_from_stats(
        weighted_sums(np.bincount(indices, minlength=segments)[None, :], stats)[0]).score
        for indices in upstream_draws(segments, resamples, seed))
    low = max(0, min(int(resamples * (UPSTREAM_ALPHA / 2)), resamples - 1))
    high = max(0, min(int(resamples * (1 - UPSTREAM_ALPHA / 2)) - 1, resamples - 1))
    return round(float(values[low]), 4), round(float(values[high]), 4)
