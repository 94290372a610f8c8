"""Paired significance tests between two systems, from their segments' sufficient statistics, in bounded memory.

`mt-eval compare` reports sacrebleu's paired bootstrap resampling and paired approximate randomization
(``sacrebleu.significance``). sacrebleu draws every resample (or trial) at once and gathers every resample's
statistics at once: for a million segments that is gigabytes of indices and tens of gigabytes of gathered
statistics. Here the same draws are made a few resamples at a time (numpy's generator gives the same numbers
however the draws are split, when a split of the trials' coin flips falls on a multiple of 32 rows), each
resample's statistics are summed from its counts (``counts @ stats``, exactly: `metric_statistics.weighted_sums`), and
each score is computed from those sums with the types sacrebleu gives them (float32 for the bootstrap, the
statistics' own for randomization). The p-values are sacrebleu's wherever its own float32 sums
are exact (every resample's totals below 2**24); beyond that, sacrebleu's sums round and these do not. Two
departures: a randomization trial whose difference equals the observed one counts towards the p-value (sacrebleu
counts only those beyond it), so runs that differ on a few segments are not called significant; for a metric of
few distinct values (TER, BLEU on a small corpus) such ties are common and its p is larger than sacrebleu's.
And a bootstrap whose resamples' differences do not vary (a single segment) gives p = 1, where sacrebleu gives
1/(resamples+1).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from mt_eval.harness.metric_statistics import CONFIDENCE, kept_counts, weighted_sums

_CELLS = 1_000_000  # resamples × segments drawn at once (8 bytes a draw, and 8 a count)
_FLIPS = 32  # the trials' coin flips are drawn a multiple of this many trials at a time (numpy's bit buffer)
# The most trials `mt-eval compare --trials` takes: a p-value shown to 4 places moves no further, and each trial costs
# a score per metric and system (a mistyped 100000000 ran for hours, holding gigabytes of scores).
MAX_TRIALS = 1_000_000


@dataclass(frozen=True)
class PairedResult:
    """Both systems' corpus scores, the two p-values (the chance of a difference at least as large as the one
    observed, were the systems the same), and the 95% interval of B − A over the bootstrap's resamples."""

    a: float
    b: float
    p_bootstrap: float
    p_randomization: float
    low: float
    high: float


def paired_tests(metric: Any, stats_a: Any, stats_b: Any, *, resamples: int, trials: int, seed: int | None
                 ) -> PairedResult:
    """sacrebleu's paired bootstrap (``resamples``) and approximate randomization (``trials``) of ``metric``
    between A (the baseline) and B, from their segments × statistics arrays (`metric_statistics.statistics_of`), with
    ``seed`` as sacrebleu's ``SACREBLEU_SEED`` (None: unseeded)."""
    kinds = _column_types(metric)
    score_a = metric._compute_score_from_stats(_totals(stats_a, kinds)).score
    score_b = metric._compute_score_from_stats(_totals(stats_b, kinds)).score
    observed = abs(score_a - score_b)
    differences = _bootstrap(metric, stats_a, stats_b, resamples, seed)
    absolute = np.abs(differences)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(differences, [tail, 100 - tail])
    # Resamples whose differences do not vary (one scored entry: every resample is that entry) test nothing:
    # sacrebleu's count, none beyond the observed difference, would call one sentence significant at 1/(n+1).
    unvaried = bool(np.isclose(differences, differences[0], rtol=1e-9, atol=1e-12).all())
    p_bootstrap = 1.0 if unvaried else _p_value(absolute - absolute.mean(), observed)
    return PairedResult(a=score_a, b=score_b, p_bootstrap=p_bootstrap,
                        p_randomization=_randomization_p(metric, stats_a, stats_b, trials, seed, observed, kinds),
                        low=round(float(low), 4), high=round(float(high), 4))


def _column_types(metric: Any) -> list[type]:
    """The Python type of each statistic as sacrebleu extracts it (whole counts are ints; TER's length a float)."""
    return [type(value) for value in metric._extract_corpus_statistics(["a"], [["a"]])[0]]


def _totals(stats: Any, kinds: list[type]) -> list[Any]:
    """The corpus's summed statistics as sacrebleu's ``sum_of_lists`` gives them (Python numbers)."""
    summed = stats.sum(axis=0, dtype=np.float64)
    return [int(value) if kind is int else float(value) for value, kind in zip(summed.tolist(), kinds, strict=True)]


def _p_value(samples: Any, observed: float, *, ties: bool = False) -> float:
    """sacrebleu's p-value: the share of samples beyond the observed statistic, counted with one added; with
    ``ties``, the samples equal to it (to rounding) count as well."""
    beyond = samples > observed
    if ties:
        beyond |= np.isclose(samples, observed, rtol=1e-9, atol=1e-12)
    return (int(np.sum(beyond)) + 1) / (len(samples) + 1)


def _bootstrap(metric: Any, stats_a: Any, stats_b: Any, resamples: int, seed: int | None) -> Any:
    """``_paired_bs_test``'s resamples: the same resample of the segments for both systems; each resample's
    score of B less A's (its p-value compares the observed difference with their absolute values, centred on
    their mean)."""
    scores_a: list[Any] = []
    scores_b: list[Any] = []
    for counts in _resample_counts(np.random.default_rng(seed), stats_a.shape[0], resamples):
        for scores, stats in ((scores_a, stats_a), (scores_b, stats_b)):
            sums = weighted_sums(counts, stats).astype(np.float32)  # sacrebleu sums float32 statistics
            scores += [metric._compute_score_from_stats(row).score for row in sums]
    return np.array(scores_b) - np.array(scores_a)


def _resample_counts(rng: Any, segments: int, resamples: int) -> Iterator[Any]:
    """How many times each segment is drawn in each resample (resamples × segments), in batches
    (`metric_statistics.kept_counts`), from ``rng.choice(segments, size=(resamples, segments))`` drawn a few rows
    at a time."""
    drawn_at_once = max(1, _CELLS // segments)

    def drawn() -> Iterator[Any]:
        for start in range(0, resamples, drawn_at_once):
            rows = min(drawn_at_once, resamples - start)
            indices = rng.choice(segments, size=(rows, segments), replace=True)
            indices += (np.arange(rows) * segments)[:, None]  # each row its own range of bins
            yield np.bincount(indices.ravel(), minlength=rows * segments).reshape(rows, segments)

    return kept_counts(drawn(), segments, resamples, drawn_at_once)


def _randomization_p(metric: Any, stats_a: Any, stats_b: Any, trials: int, seed: int | None, observed: float,
                     kinds: list[type]) -> float:
    """``_paired_ar_test``: each trial swaps each segment's outputs between the systems on a coin flip; the
    p-value of the observed difference against the trials' absolute differences."""
    rng = np.random.default_rng(seed)
    segments = stats_a.shape[0]
    dtype = np.int64 if all(kind is int for kind in kinds) else np.float64  # as numpy makes sacrebleu's lists
    total_a, total_b = stats_a.sum(axis=0, dtype=np.float64), stats_b.sum(axis=0, dtype=np.float64)
    at_once = max(_FLIPS, _CELLS // segments // _FLIPS * _FLIPS)
    scores_a: list[Any] = []
    scores_b: list[Any] = []
    for start in range(0, trials, at_once):
        flips = rng.integers(2, size=(min(at_once, trials - start), segments), dtype=bool)
        # A trial's pseudo-A takes A's statistics where its coin came up and B's elsewhere: B's total, plus A's
        # flipped segments, less B's; its pseudo-B is the rest.
        moved = weighted_sums(flips, stats_a, minus=stats_b)
        for row in moved:
            scores_a.append(metric._aggregate_and_compute((total_b + row).astype(dtype)[None, :]).score)
            scores_b.append(metric._aggregate_and_compute((total_a - row).astype(dtype)[None, :]).score)
    # Ties count: when the runs differ on a few segments, a trial has one of only 2**k outcomes, and most equal the
    # observed difference (swapping one segment's outputs swaps the two scores). sacrebleu counts only trials beyond
    # it, which makes one differing segment "significant" at p = 1/(trials+1); with ties it is p = 1.
    return _p_value(np.abs(np.array(scores_a) - np.array(scores_b)), observed, ties=True)

