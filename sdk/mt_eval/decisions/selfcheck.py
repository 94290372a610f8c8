"""Checking the scorer before trusting it: the Uniform baseline against closed forms.

The Uniform baseline gives every option of a question the same probability 1/k. For a gold distribution g
over k options, the metrics have closed forms, computed here question by question with plain arithmetic
(independently of `mt_eval.decisions.metrics`, whose numbers they check):

- Brier: Σ (1/k − g_i)² = Σ g_i² − 1/k (one-hot gold: 1 − 1/k);
- KL: Σ g_i ln(g_i k) = ln k − H(g) (one-hot gold: ln k);
- accuracy: the baseline's most probable option is the first (ties go to the first option), so a question is
  correct when its first option is a most probable gold option;
- ECE: every confidence is 1/k, in bin ⌊B/k⌋ (the last bin when k = 1): Σ_b |Σ_{i∈b} (correct_i − 1/k_i)| / N;
- ev_mae (score): |mean(values) − Σ g_i v_i|, the uniform distribution's expected value against gold's.

`run_self_check` runs the real metric engine on the baseline's answers for the corpus and compares every
metric of every group; `mt-eval decide run` refuses to report when any differs by more than ``TOLERANCE``.
"""

from __future__ import annotations

import math
from collections import defaultdict

import msgspec

from mt_eval.decisions.corpus import DecisionCorpus
from mt_eval.decisions.metrics import DEFAULT_BINS, GROUPS, Judged, point_metrics

TOLERANCE = 1e-9


class Check(msgspec.Struct, kw_only=True):
    group: str
    metric: str
    computed: float
    closed_form: float
    difference: float
    passed: bool


class SelfCheck(msgspec.Struct, kw_only=True):
    """The scorer's result on the Uniform baseline against the closed forms, metric by metric."""

    baseline: str = "uniform"
    passed: bool
    questions: int
    tolerance: float = TOLERANCE
    checks: list[Check] = msgspec.field(default_factory=list)
    reason: str | None = None

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def uniform_judged(corpus: DecisionCorpus) -> list[Judged]:
    """The Uniform baseline's answer to every gold question of the corpus."""
    judged = []
    for case, (row, gold) in enumerate(zip(corpus.rows, corpus.gold, strict=True)):
        for name, distribution in gold.items():
            question = row.questions[name]
            k = len(distribution)
            values = [level.value for level in question.levels or []] if question.type == "score" else None
            judged.append(Judged(case=case, kind=question.type, predicted=[1 / k] * k, gold=distribution,
                                 values=values))
    return judged


def closed_forms(judged: list[Judged], bins: int = DEFAULT_BINS) -> dict[str, dict[str, float]]:
    """Every metric of the Uniform baseline, from the closed forms, per group."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    gaps: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for item in judged:
        k = len(item.gold)
        brier = sum(g * g for g in item.gold) - 1 / k
        kl = math.log(k) + sum(g * math.log(g) for g in item.gold if g > 0)
        correct = 1.0 if item.gold[0] >= max(item.gold) - 1e-12 else 0.0
        bin_ = min(bins // k, bins - 1)
        for group in ("overall", item.kind):
            total = sums[group]
            total["questions"] += 1
            total["brier"] += brier
            total["kl"] += kl
            total["accuracy"] += correct
            gaps[group][bin_] += correct - 1 / k
            if item.kind == "score" and item.values is not None and group == "score":
                uniform_mean = sum(item.values) / k
                total["ev_mae"] += abs(uniform_mean - sum(g * v for g, v in zip(item.gold, item.values, strict=True)))
    out: dict[str, dict[str, float]] = {}
    for group, total in sums.items():
        n = total["questions"]
        out[group] = {metric: value / n for metric, value in total.items() if metric != "questions"}
        out[group]["ece"] = sum(abs(gap) for gap in gaps[group].values()) / n
    return out


def run_self_check(corpus: DecisionCorpus, bins: int = DEFAULT_BINS) -> SelfCheck:
    """Score the Uniform baseline with the metric engine and compare with the closed forms."""
    judged = uniform_judged(corpus)
    if not judged:
        return SelfCheck(passed=False, questions=0, reason="the corpus has no gold answers to check the scorer on")
    computed, _stats, _table = point_metrics(judged, len(corpus.rows), bins)
    expected = closed_forms(judged, bins)
    checks = []
    for group in GROUPS:
        if group not in expected:
            continue
        for metric, closed in expected[group].items():
            value = computed[group].get(metric, math.nan)
            difference = abs(value - closed) if math.isfinite(value) else math.inf
            checks.append(Check(group=group, metric=metric, computed=value, closed_form=closed,
                                difference=difference, passed=difference <= TOLERANCE))
    return SelfCheck(passed=all(c.passed for c in checks), questions=len(judged), checks=checks)


def describe_self_check(check: SelfCheck) -> str:
    """The check as a short table: group, metric, scorer, closed form, difference."""
    if check.reason:
        return f"scorer self-check: not run: {check.reason}"
    lines = [f"scorer self-check on the Uniform baseline ({check.questions} gold questions): "
             + ("passed" if check.passed else "FAILED"),
             f"  {'group':<8} {'metric':<9} {'scorer':>12} {'closed form':>12} {'difference':>11}"]
    for c in check.checks:
        mark = "" if c.passed else "   <-- disagrees"
        lines.append(f"  {c.group:<8} {c.metric:<9} {c.computed:>12.6f} {c.closed_form:>12.6f} "
                     f"{c.difference:>11.1e}{mark}")
    return "\n".join(lines)
