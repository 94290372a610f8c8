"""Corpus metrics with sacrebleu — chrF++ (headline), BLEU and TER — and bootstrap confidence intervals.

Intervals come from per-segment sufficient statistics: sacrebleu extracts each segment's statistics once,
a resample is a vector of multinomial counts over the segments, and its score is computed from the
weighted sum of statistics (``counts @ stats``) — never by re-running ``corpus_score`` per resample.
Resamples are drawn in chunks, so memory stays bounded for any corpus size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345
_CHUNK_CELLS = 4_000_000  # resamples × segments drawn at once


class MetricScore(msgspec.Struct, kw_only=True):
    """One corpus-level metric with its sacrebleu signature and 95% bootstrap interval."""

    name: str
    score: float
    signature: str
    ci_low: float | None = None
    ci_high: float | None = None
    higher_is_better: bool = True


class Scores(msgspec.Struct, kw_only=True):
    headline: str
    metrics: list[MetricScore]
    segments: int
    bootstrap_resamples: int
    bootstrap_seed: int
    confidence: float = CONFIDENCE


def make_metrics() -> dict[str, Any]:
    """The metrics, headline first: chrF++ (chrF with word bigrams), BLEU, TER."""
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.metrics.chrf import CHRF
    from sacrebleu.metrics.ter import TER

    return {"chrF++": CHRF(word_order=2), "BLEU": BLEU(), "TER": TER()}


def score(hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, resamples: int = DEFAULT_RESAMPLES,
          seed: int = DEFAULT_SEED, metrics: dict[str, Any] | None = None) -> Scores:
    """Corpus scores with intervals. ``references`` holds one or more reference streams, each parallel to
    ``hypotheses``; a failed entry should be passed as an empty hypothesis."""
    import numpy as np

    for stream in references:
        if len(stream) != len(hypotheses):
            raise ValueError(f"{len(hypotheses)} hypotheses but a reference stream of {len(stream)}")
    results = []
    rng = np.random.default_rng(seed)
    refs = [list(stream) for stream in references]
    for name, metric in (metrics or make_metrics()).items():
        stats = np.asarray(metric._extract_corpus_statistics(list(hypotheses), refs), dtype=np.float64)
        total = metric._compute_score_from_stats(stats.sum(axis=0)).score
        low = high = None
        if resamples > 0 and len(hypotheses) > 0:
            low, high = _interval(metric, stats, resamples, rng)
        results.append(MetricScore(name=name, score=round(float(total), 4), signature=str(metric.get_signature()),
                                   ci_low=low, ci_high=high, higher_is_better=name != "TER"))
    return Scores(headline="chrF++", metrics=results, segments=len(hypotheses), bootstrap_resamples=resamples,
                  bootstrap_seed=seed)


def _interval(metric: Any, stats: Any, resamples: int, rng: Any) -> tuple[float, float]:
    import numpy as np

    segments = stats.shape[0]
    chunk = max(1, _CHUNK_CELLS // segments)
    uniform = np.full(segments, 1.0 / segments)
    values: list[float] = []
    for start in range(0, resamples, chunk):
        counts = rng.multinomial(segments, uniform, size=min(chunk, resamples - start))
        for summed in counts.astype(np.float64) @ stats:
            values.append(metric._compute_score_from_stats(summed).score)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return round(float(low), 4), round(float(high), 4)
