"""Scoring decisions against gold: accuracy, KL divergence, Brier score, ECE and, for score questions, the error
of the expected value — per question type and overall, with case-level bootstrap intervals.

Definitions (p: the method's distribution over a question's k options, g: the gold distribution):

- **accuracy**: the share of questions whose most probable option (the first in the question's order when
  several tie) is a most probable gold option;
- **KL**: KL(g ‖ p) = Σ g·ln(g / p) in nats over options with g > 0; p is floored at ``KL_FLOOR`` (1e-12) here
  only, so one confident wrong answer costs about 27.6 nats instead of infinity;
- **Brier**: Σ (p − g)², the **sum** over the options (0 to 2; the mean over questions is reported);
- **ECE**: top-label expected calibration error with ``bins`` equal-width bins of the confidence max p:
  bin b holds confidences in [b/B, (b+1)/B) (the last bin includes 1), and
  ECE = Σ_b |Σ_{i∈b} correct_i − Σ_{i∈b} confidence_i| / N;
- **ev_mae**: score questions only, the mean |E_p − E_g| of the expected level values.

Intervals resample **cases** (rows, with all their questions) with replacement. Each case is summarised once by
its sufficient statistics (per group: questions, correct, KL, Brier, expected-value error, and per ECE bin the
confidence and correct sums); a resample is a vector of counts over cases and its statistics are
``counts @ stats`` — the metrics are never recomputed from resampled decisions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
import numpy as np

GROUPS = ("overall", "noul", "choice", "score")
KL_FLOOR = 1e-12
DEFAULT_BINS = 10
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345
CONFIDENCE = 0.95
_CHUNK_CELLS = 4_000_000  # resamples × cases drawn at once
_GOLD_TIE = 1e-12


@dataclass(frozen=True)
class Judged:
    """One answered question with its gold: what the metrics are computed from."""

    case: int  # index of its case (row): resampling keeps a case's questions together
    kind: str  # noul, choice or score
    predicted: Sequence[float]  # over the question's options, in order
    gold: Sequence[float]
    values: Sequence[float] | None = None  # score: the levels' values


class MetricValue(msgspec.Struct, kw_only=True):
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class ReliabilityBin(msgspec.Struct, kw_only=True):
    low: float
    high: float
    questions: int
    mean_confidence: float | None
    accuracy: float | None


class GroupMetrics(msgspec.Struct, kw_only=True):
    questions: int
    accuracy: MetricValue
    kl: MetricValue
    brier: MetricValue
    ece: MetricValue
    ev_mae: MetricValue | None = None
    reliability: list[ReliabilityBin] = msgspec.field(default_factory=list)


class DecisionMetrics(msgspec.Struct, kw_only=True):
    """Metrics per group (overall, noul, choice, score; a group without scored questions is left out)."""

    groups: dict[str, GroupMetrics]
    cases: int
    ece_bins: int
    kl_floor: float = KL_FLOOR
    bootstrap_resamples: int
    bootstrap_seed: int
    bootstrap_unit: str = "case"
    confidence: float = CONFIDENCE


_N, _CORRECT, _KL, _BRIER, _BINS_FROM = range(5)
TYPES = GROUPS[1:]  # the overall group's statistics are the sum of the types'


@dataclass(frozen=True)
class _Layout:
    """Column positions in the per-case statistics matrix: per question type, questions, correct, KL and Brier,
    then the confidence and the correct sums of each ECE bin; last, the score questions' expected-value error."""

    bins: int

    @property
    def per_type(self) -> int:
        return _BINS_FROM + 2 * self.bins

    def base(self, kind: str) -> int:
        return TYPES.index(kind) * self.per_type

    @property
    def ev_column(self) -> int:
        return len(TYPES) * self.per_type

    @property
    def width(self) -> int:
        return self.ev_column + 1


def instance_statistics(judged: Sequence[Judged], bins: int = DEFAULT_BINS) -> dict[str, np.ndarray]:
    """Per question: correct, confidence, KL, Brier, |ΔE| (score), its ECE bin, group and case."""
    width = max((len(j.predicted) for j in judged), default=1)
    p = np.zeros((len(judged), width))
    g = np.zeros((len(judged), width))
    v = np.zeros((len(judged), width))
    valid = np.zeros((len(judged), width), dtype=bool)
    for i, j in enumerate(judged):
        k = len(j.predicted)
        p[i, :k], g[i, :k], valid[i, :k] = j.predicted, j.gold, True
        if j.values is not None:
            v[i, :k] = j.values
    masked = np.where(valid, p, -np.inf)
    choice = masked.argmax(axis=1)  # the first most probable option
    rows = np.arange(len(judged))
    confidence = p[rows, choice]
    correct = g[rows, choice] >= g.max(axis=1, initial=0.0) - _GOLD_TIE
    positive = g > 0
    kl = np.where(positive, g * (np.log(np.where(positive, g, 1.0)) - np.log(np.maximum(p, KL_FLOOR))), 0.0).sum(axis=1)
    brier = ((p - g) ** 2).sum(axis=1)
    is_score = np.array([j.kind == "score" for j in judged], dtype=bool)
    ev_error = np.where(is_score, np.abs((p * v).sum(axis=1) - (g * v).sum(axis=1)), 0.0)
    return {
        "case": np.array([j.case for j in judged], dtype=np.int64),
        "group": np.array([GROUPS.index(j.kind) for j in judged], dtype=np.int64),
        "correct": correct.astype(np.float64), "confidence": confidence, "kl": kl, "brier": brier,
        "ev_error": ev_error, "is_score": is_score.astype(np.float64),
        "bin": ece_bins(confidence, bins),
    }


def ece_bins(confidence: np.ndarray, bins: int) -> np.ndarray:
    """Each confidence's ECE bin: b with b/B ≤ confidence < (b+1)/B (the last bin includes 1), compared with b/B as
    a float, so a confidence of exactly b/B is in bin b (1/49 × 49 is 0.9999999999999999: the floor of the
    product alone would put 1/49 in bin 0 of 49), and one just below b/B (0.7999999999 of 10 bins) in bin b − 1."""
    b = np.clip(np.floor(confidence * bins), 0, bins - 1).astype(np.int64)  # off by one at most
    b = np.where((b + 1 < bins) & (confidence >= (b + 1) / bins), b + 1, b)
    below: np.ndarray = np.where((b > 0) & (confidence < b / bins), b - 1, b)
    return below


def case_statistics(stats: dict[str, np.ndarray], cases: int, bins: int) -> np.ndarray:
    """The cases × statistics matrix: each case's sums, per question type and per ECE bin (see `_Layout`)."""
    layout = _Layout(bins=bins)
    out = np.zeros((cases, layout.width))
    case = stats["case"]
    for kind in TYPES:
        chosen = stats["group"] == GROUPS.index(kind)
        if not chosen.any():
            continue
        at, base = case[chosen], layout.base(kind)
        for offset, weights in ((_N, None), (_CORRECT, stats["correct"]), (_KL, stats["kl"]),
                                (_BRIER, stats["brier"])):
            out[:, base + offset] = np.bincount(at, weights=None if weights is None else weights[chosen],
                                                minlength=cases)
        cell = at * bins + stats["bin"][chosen]
        first = base + _BINS_FROM
        out[:, first:first + bins] = np.bincount(cell, weights=stats["confidence"][chosen],
                                                 minlength=cases * bins).reshape(cases, bins)
        out[:, first + bins:first + 2 * bins] = np.bincount(cell, weights=stats["correct"][chosen],
                                                            minlength=cases * bins).reshape(cases, bins)
    out[:, layout.ev_column] = np.bincount(case, weights=stats["ev_error"], minlength=cases)
    return out


def metrics_from_sums(sums: np.ndarray, bins: int) -> dict[str, dict[str, np.ndarray]]:
    """Metric values from summed statistics (one row per resample, or a single row)."""
    layout = _Layout(bins=bins)
    sums = np.atleast_2d(sums)
    per_type = [sums[:, layout.base(kind):layout.base(kind) + layout.per_type] for kind in TYPES]
    out: dict[str, dict[str, np.ndarray]] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, columns in zip(GROUPS, [np.sum(per_type, axis=0), *per_type], strict=True):
            n = columns[:, _N]
            first = _BINS_FROM
            gaps = np.abs(columns[:, first + bins:first + 2 * bins] - columns[:, first:first + bins]).sum(axis=1)
            values = {"questions": n, "accuracy": columns[:, _CORRECT] / n, "kl": columns[:, _KL] / n,
                      "brier": columns[:, _BRIER] / n, "ece": gaps / n}
            if name == "score":
                values["ev_mae"] = sums[:, layout.ev_column] / n
            out[name] = values
    return out


def bootstrap(case_stats: np.ndarray, bins: int, resamples: int, seed: int
              ) -> dict[str, dict[str, tuple[float | None, float | None]]]:
    """95% percentile intervals of every metric from ``resamples`` case-level resamples."""
    rng = np.random.default_rng(seed)
    cases = case_stats.shape[0]
    chunk = max(1, _CHUNK_CELLS // max(cases, 1))
    used = np.flatnonzero(np.any(case_stats != 0, axis=0))  # empty columns (e.g. unreachable bins) sum to 0
    stats = np.ascontiguousarray(case_stats[:, used])
    collected: list[dict[str, dict[str, np.ndarray]]] = []
    for start in range(0, resamples, chunk):
        counts = resample_counts(rng, cases, min(chunk, resamples - start))
        sums = np.zeros((counts.shape[0], case_stats.shape[1]))
        sums[:, used] = counts @ stats
        collected.append(metrics_from_sums(sums, bins))
    tail = (1 - CONFIDENCE) / 2 * 100
    out: dict[str, dict[str, tuple[float | None, float | None]]] = {}
    for group in GROUPS:
        out[group] = {}
        for metric in collected[0][group]:
            values = np.concatenate([c[group][metric] for c in collected])
            finite = values[np.isfinite(values)]
            if finite.size == 0:
                out[group][metric] = (None, None)
                continue
            low, high = np.percentile(finite, [tail, 100 - tail])
            out[group][metric] = (float(low), float(high))
    return out


def resample_counts(rng: np.random.Generator, cases: int, resamples: int) -> np.ndarray:
    """How often each case is drawn in each of ``resamples`` resamples of ``cases`` draws with replacement."""
    counts = np.empty((resamples, cases))
    for row in counts:
        row[:] = np.bincount(rng.integers(0, cases, size=cases), minlength=cases)
    return counts


def point_metrics(judged: Sequence[Judged], cases: int, bins: int = DEFAULT_BINS
                  ) -> tuple[dict[str, dict[str, float]], dict[str, np.ndarray], np.ndarray]:
    """Unrounded metric values per group, with the per-question and per-case statistics they came from."""
    stats = instance_statistics(judged, bins)
    table = case_statistics(stats, cases, bins)
    point = {group: {metric: float(values[0]) for metric, values in metrics.items()}
             for group, metrics in metrics_from_sums(table.sum(axis=0), bins).items()}
    return point, stats, table


def score_decisions(judged: Sequence[Judged], cases: int, *, bins: int = DEFAULT_BINS,
                    resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> DecisionMetrics:
    """The metrics of ``judged`` (answered questions with gold) over ``cases`` cases, with intervals."""
    if bins < 1:
        raise ValueError("ECE needs at least one bin")
    point, stats, table = point_metrics(judged, cases, bins)
    intervals = bootstrap(table, bins, resamples, seed) if resamples > 0 and cases > 0 else {}
    groups: dict[str, GroupMetrics] = {}
    for group, values in point.items():
        questions = int(values["questions"])
        if questions == 0:
            continue
        ci = intervals.get(group, {})
        metric = {name: MetricValue(value=_round(values[name]), ci_low=_round(ci.get(name, (None, None))[0]),
                                    ci_high=_round(ci.get(name, (None, None))[1]))
                  for name in values if name != "questions"}
        groups[group] = GroupMetrics(
            questions=questions, accuracy=metric["accuracy"], kl=metric["kl"], brier=metric["brier"],
            ece=metric["ece"], ev_mae=metric.get("ev_mae"), reliability=_reliability(stats, group, bins))
    return DecisionMetrics(groups=groups, cases=cases, ece_bins=bins, bootstrap_resamples=resamples,
                           bootstrap_seed=seed)


def _reliability(stats: dict[str, np.ndarray], group: str, bins: int) -> list[ReliabilityBin]:
    chosen = np.ones(len(stats["case"]), dtype=bool) if group == "overall" else stats["group"] == GROUPS.index(group)
    out = []
    for b in range(bins):
        in_bin = chosen & (stats["bin"] == b)
        count = int(in_bin.sum())
        out.append(ReliabilityBin(
            low=round(b / bins, 6), high=round((b + 1) / bins, 6), questions=count,
            mean_confidence=_round(float(stats["confidence"][in_bin].mean())) if count else None,
            accuracy=_round(float(stats["correct"][in_bin].mean())) if count else None))
    return out


def _round(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else round(value, 6)
