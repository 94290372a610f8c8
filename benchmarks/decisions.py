"""Scoring decisions with bootstrap intervals, every figure measured in this run.

100,000 decisions (noul, choice and score questions over 50,000 cases, random predictions and soft gold) are
scored with 1,000 case-level bootstrap resamples the way `mt-eval decide run` does it — each case summarised
once by its sufficient statistics, a resample's metrics from ``counts @ stats`` — and, as the baseline, the
straightforward way: for each resample, rebuild the resampled decisions and score them from scratch. The
baseline is timed on ``--sample`` resamples and scaled to 1,000; on those resamples both ways must give the
same values (every metric of every group, to 1e-9). Target: the vectorised scoring ≥ 50× faster.

Run: ``python benchmarks/decisions.py`` (``--check`` exits 1 when the target is missed or the values differ).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

import numpy as np
from report import Figure, at_least, record

from mt_eval.decisions import metrics as m

KINDS = (("noul", 2), ("choice", 3), ("score", 5))


def make_decisions(count: int, seed: int = 7) -> tuple[list[m.Judged], int]:
    """``count`` decisions over count / 2 cases: each case asks two questions of random types."""
    rng = np.random.default_rng(seed)
    judged = []
    for i in range(count):
        kind, k = KINDS[int(rng.integers(0, 3))]
        judged.append(m.Judged(case=i // 2, kind=kind, predicted=rng.dirichlet(np.ones(k)).tolist(),
                               gold=rng.dirichlet(np.ones(k) * 0.4).tolist(),
                               values=list(range(k)) if kind == "score" else None))
    return judged, (count + 1) // 2


def straightforward(by_case: dict[int, list[m.Judged]], counts: np.ndarray, bins: int) -> dict[str, dict[str, float]]:
    """One resample scored from scratch: its decisions rebuilt, then every metric recomputed from them."""
    resampled = []
    for copy, case in enumerate(np.repeat(np.arange(len(counts)), counts.astype(np.int64))):
        resampled.extend(m.Judged(case=copy, kind=j.kind, predicted=j.predicted, gold=j.gold, values=j.values)
                         for j in by_case[int(case)])
    point, _, _ = m.point_metrics(resampled, cases=int(counts.sum()), bins=bins)
    return point


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=5, help="baseline resamples timed and compared")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args()
    bins, seed = m.DEFAULT_BINS, 12345
    judged, cases = make_decisions(args.decisions)

    started = time.perf_counter()
    scored = m.score_decisions(judged, cases, bins=bins, resamples=args.resamples, seed=seed)
    vectorised_s = time.perf_counter() - started

    by_case: dict[int, list[m.Judged]] = defaultdict(list)
    for j in judged:
        by_case[j.case].append(j)
    counts = m.resample_counts(np.random.default_rng(seed), cases, args.sample)  # the engine's first draws
    stats = m.case_statistics(m.instance_statistics(judged, bins), cases, bins)
    fast = m.metrics_from_sums(counts @ stats, bins)
    started = time.perf_counter()
    slow = [straightforward(by_case, counts[r], bins) for r in range(args.sample)]
    per_resample_s = (time.perf_counter() - started) / args.sample
    started = time.perf_counter()
    m.point_metrics(judged, cases, bins)
    point_s = time.perf_counter() - started
    baseline_s = point_s + per_resample_s * args.resamples

    difference = max(abs(float(fast[group][metric][r]) - value)
                     for r, point in enumerate(slow) for group, values in point.items()
                     for metric, value in values.items() if np.isfinite(value))
    same = difference <= 1e-9
    ratio = baseline_s / vectorised_s
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    overall = scored.groups["overall"]
    print(f"scoring {args.decisions:,} decisions ({cases:,} cases; noul, choice and score) with "
          f"{args.resamples:,} case-level bootstrap resamples")
    print(f"  vectorised (per-case statistics, counts @ stats): {vectorised_s:8.2f} s")
    print(f"  straightforward recomputation: {per_resample_s:.3f} s per resample × {args.resamples:,} + "
          f"{point_s:.2f} s = {baseline_s:8.1f} s (timed on {args.sample} resamples)")
    print(f"  ratio: {ratio:,.0f}× (target ≥ 50×) {'met' if ratio >= 50 else 'MISSED'}")
    print(f"  same values on the {args.sample} compared resamples: {'yes' if same else 'NO'} "
          f"(largest difference {difference:.1e})")
    print(f"  overall accuracy {overall.accuracy.value} [{overall.accuracy.ci_low}, {overall.accuracy.ci_high}], "
          f"Brier {overall.brier.value} [{overall.brier.ci_low}, {overall.brier.ci_high}]")
    print(f"  load average {load} on {os.cpu_count()} cores")
    record([Figure("decisions", f"decision scoring, {args.decisions:,} decisions", ours=f"{vectorised_s:.2f} s",
                   baseline=f"{baseline_s:,.1f} s recomputed", value=ratio, target=at_least(50),
                   note=f"same values: {'yes' if same else 'NO'}")])
    if not same:
        return 1
    return 1 if args.check and ratio < 50 else 0


if __name__ == "__main__":
    sys.exit(main())
