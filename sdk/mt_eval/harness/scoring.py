"""Corpus metrics with sacrebleu — chrF++ (headline), BLEU and TER — and bootstrap confidence intervals.

Intervals come from per-segment sufficient statistics (`mt_eval.harness.metric_statistics`): sacrebleu
extracts each segment's statistics once, a resample is a vector of counts over the segments, and its score is
computed from the weighted sum of statistics (``counts @ stats``) — never by re-running ``corpus_score`` per
resample. Resamples are drawn in chunks, so memory stays bounded for any corpus size. A large corpus is scored
in worker processes (`mt_eval.harness.scorer_processes`).

Two ways of drawing resamples (``mt-eval run --bootstrap``): ``fast`` (the default: numpy multinomial counts,
a seed of its own per metric, numpy's percentiles) and ``upstream``, the upstream harness's draws exactly —
``random.Random(seed)`` per metric, each resample ``randint(0, n - 1)`` n times, the interval the sorted
values at ``int(B × 0.025)`` and ``int(B × 0.975) - 1`` — for teams comparing against cards it produced. Both
score a resample from its summed segment statistics; ``upstream`` is slower (n × B Python draws per metric).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import msgspec

from mt_eval.harness import scorer_processes
from mt_eval.harness.metric_settings import make_metrics as make_metrics  # (re-exported: tokenized for the target)
from mt_eval.harness.metric_settings import tokenizer_fallback
from mt_eval.harness.metric_statistics import (
    CONFIDENCE,
    Bootstrap,
    MetricScore,
    Segments,
    SegmentSource,
    scored,
    statistics_of,
)

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345
STATS_CHUNK = 5_000  # segments whose statistics sacrebleu extracts at once (its reference caches grow with them)
BOOTSTRAPS: tuple[Bootstrap, ...] = ("fast", "upstream")
_SAID_AFTER_S = 5.0  # scoring that took this long is followed by the time it took
# sacrebleu's TER holds a segment's hypothesis words × reference words edit-distance cells (~17 bytes each, ~1 GiB
# at 8,000 × 8,000 words; 70,000 × 70,000 would take ~80 GB): beyond this, a run computes no TER (`out_of_reach`)
TER_MAX_WORD_PAIRS = 8_000 * 8_000


class Scores(msgspec.Struct, kw_only=True):
    headline: str
    metrics: list[MetricScore]
    segments: int
    bootstrap_resamples: int
    bootstrap_seed: int
    confidence: float = CONFIDENCE
    bootstrap: Bootstrap = "fast"  # how resamples were drawn (module docstring); absent from older cards: fast
    # the metrics not computed, with why (`out_of_reach`: TER on a segment too long for it); absent from older cards
    not_computed: dict[str, str] = msgspec.field(default_factory=dict)


def score(hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, resamples: int = DEFAULT_RESAMPLES,
          seed: int = DEFAULT_SEED, metrics: dict[str, Any] | None = None, bootstrap: Bootstrap = "fast",
          translated: int | None = None) -> Scores:
    """Corpus scores with intervals. ``references`` holds one or more reference streams, each parallel to
    ``hypotheses``; a failed entry should be passed as an empty hypothesis, and ``translated`` say how many did not
    fail (None: all of them; the ``upstream`` bootstrap gives no interval when fewer than 2 did).

    Large corpora are scored in parallel: a forked process per metric but the last, which this process scores
    meanwhile (statistics are extracted in chunks, so memory stays bounded); with the ``fast`` bootstrap each
    metric's resamples use their own seed derived from ``seed``, with ``upstream`` every metric draws from
    ``random.Random(seed)`` as the upstream harness does.
    """
    for stream in references:
        if len(stream) != len(hypotheses):
            raise ValueError(f"{len(hypotheses)} hypotheses but a reference stream of {len(stream)}")
    hyps, refs = list(hypotheses), [list(stream) for stream in references]
    return score_segments(ListedSegments(hyps, refs), len(hyps), resamples=resamples, seed=seed, metrics=metrics,
                          bootstrap=bootstrap, translated=translated)


class ListedSegments:
    """Lists of segments as a `SegmentSource`: `STATS_CHUNK` at a time."""

    def __init__(self, hypotheses: list[str], references: list[list[str]]) -> None:
        self.hypotheses, self.references = hypotheses, references

    def __call__(self) -> Segments:
        return in_chunks(self.hypotheses, self.references)


def in_chunks(hypotheses: list[str], references: list[list[str]]) -> Segments:
    for start in range(0, len(hypotheses), STATS_CHUNK):
        yield hypotheses[start:start + STATS_CHUNK], [stream[start:start + STATS_CHUNK] for stream in references]


def score_segments(segments: SegmentSource, count: int, *, resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED, metrics: dict[str, Any] | None = None,
                   bootstrap: Bootstrap = "fast", stream: TextIO | None = None, also: Sequence[str] = (),
                   translated: int | None = None) -> Scores:
    """`score` over ``count`` segments that ``segments()`` reads chunk by chunk (a run's results and references
    read from disk): no process holds more than a chunk of texts, and each metric only its statistics
    (``translated``: as for `score`). With a
    ``stream``, what is scored is said there as it starts (a large corpus's intervals take minutes), with the
    metrics ``also`` scored after these (extensions'), and the time it took when that was `_SAID_AFTER_S` or more."""
    if bootstrap not in BOOTSTRAPS:
        raise ValueError(f"bootstrap must be one of {', '.join(BOOTSTRAPS)}, not {bootstrap!r}")
    if count <= 0:
        raise ValueError("nothing to score: no hypotheses")
    every = metrics or make_metrics()
    not_computed = out_of_reach(every, segments(), getattr(segments, "key_at", None))  # (a run's: ids known)
    chosen = {name: metric for name, metric in every.items() if name not in not_computed}
    started = time.monotonic()
    if stream is not None:
        intervals = f"95% intervals from {resamples:,} bootstrap resamples ({bootstrap})" if resamples else \
            "no intervals"
        print(f"scoring {count:,} entr{'y' if count == 1 else 'ies'}: {', '.join([*chosen, *also])}; {intervals}",
              file=stream, flush=True)
        for why in [tokenizer_fallback(every), *not_computed.values()]:
            if why is not None:
                print(f"warning: {why}", file=stream, flush=True)
    jobs = [(name, metric, segments, count, resamples, (seed, index), bootstrap, translated)  # (seed: the place
            for index, (name, metric) in enumerate(every.items()) if name in chosen]  # among all the metrics)
    workers = scorer_processes.parallel(len(jobs), count)
    results = (scorer_processes.score_in_processes(jobs, count, workers) if workers else
               [_score_metric(*job) for job in jobs])
    if stream is not None and time.monotonic() - started >= _SAID_AFTER_S:
        from mt_eval.durations import format_duration

        print(f"scored in {format_duration(time.monotonic() - started)}", file=stream, flush=True)
    return Scores(headline=next(iter(chosen)), metrics=results, segments=count, bootstrap_resamples=resamples,
                  bootstrap_seed=seed, bootstrap=bootstrap, not_computed=not_computed)


def out_of_reach(metrics: dict[str, Any], segments: Segments, key: Callable[[int], Any] | None = None
                 ) -> dict[str, str]:
    """The metrics of ``metrics`` that cannot be computed on ``segments``, with why: TER, when a segment's
    hypothesis words × reference words (as TER tokenizes them) exceed `TER_MAX_WORD_PAIRS`. ``key(position)``:
    the id of the scored entry at a position, when the segments can name it."""
    ter = metrics.get("TER")
    if ter is None:
        return {}
    position = 0
    for hypotheses, references in segments:
        for hypothesis, *streams in zip(hypotheses, *references, strict=True):
            position += 1
            longest = max(len(reference) for reference in streams)
            if len(hypothesis) * longest <= TER_MAX_WORD_PAIRS:  # (a word is a character at least: within reach)
                continue
            words = len(ter._preprocess_segment(hypothesis).split())
            reference_words = max(len(ter._preprocess_segment(reference).split()) for reference in streams)
            if words * reference_words > TER_MAX_WORD_PAIRS:  # (sacrebleu's TER would hold them all)
                named = f"{key(position)!r} (scored entry {position:,})" if key else f"scored entry {position:,}"
                pairs = words * reference_words
                return {"TER": f"TER not computed: {named} has {words:,} hypothesis words and {reference_words:,} "
                               f"reference words, and TER's memory grows with their product ({pairs:,}; TER is "
                               f"computed up to {TER_MAX_WORD_PAIRS:,}, ~1 GiB); the other metrics are computed"}
    return {}


def _score_metric(name: str, metric: Any, segments: SegmentSource, count: int, resamples: int,
                  seed: tuple[int, int], bootstrap: Bootstrap = "fast", translated: int | None = None) -> MetricScore:
    """One metric's score and interval, in this process."""
    return scored(name, metric, statistics_of(metric, segments(), count), resamples, seed, bootstrap, translated)


def segment_statistics(metric: Any, hypotheses: list[str], references: list[list[str]]) -> Any:
    """Each segment's sufficient statistics (a segments × statistics array), extracted in chunks."""
    return statistics_of(metric, in_chunks(hypotheses, references), len(hypotheses))


