"""The decision metrics by hand, the vectorised bootstrap against per-resample recomputation, and the scorer's
self-check on the Uniform baseline against closed forms (and that it catches a broken scorer)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from mt_eval.decisions import metrics as m
from mt_eval.decisions.corpus import read_decision_corpus
from mt_eval.decisions.selfcheck import closed_forms, run_self_check, uniform_judged

REPO = Path(__file__).parent.parent
EXAMPLE_CORPUS = REPO / "examples" / "data" / "adequacy-decisions.jsonl"

JUDGED = [
    m.Judged(case=0, kind="noul", predicted=[0.8, 0.2], gold=[1.0, 0.0]),
    m.Judged(case=0, kind="choice", predicted=[0.5, 0.5, 0.0], gold=[0.0, 1.0, 0.0]),
    m.Judged(case=1, kind="score", predicted=[0.0, 0.0, 1.0], gold=[0.0, 1.0, 0.0], values=[0, 1, 2]),
    m.Judged(case=2, kind="noul", predicted=[0.3, 0.7], gold=[0.5, 0.5]),
]


def test_each_metric_by_hand():
    point, _, _ = m.point_metrics(JUDGED, cases=3, bins=10)
    kl = [-math.log(0.8), -math.log(0.5), -math.log(m.KL_FLOOR), 0.5 * math.log(0.5 / 0.3) + 0.5 * math.log(0.5 / 0.7)]
    brier = [0.08, 0.5, 2.0, 0.08]
    correct = [1, 0, 0, 1]  # the choice tie goes to the first option; a gold tie accepts either option
    confidence = [0.8, 0.5, 1.0, 0.7]
    overall = point["overall"]
    assert overall["questions"] == 4
    assert overall["accuracy"] == pytest.approx(sum(correct) / 4)
    assert overall["kl"] == pytest.approx(sum(kl) / 4)
    assert overall["brier"] == pytest.approx(sum(brier) / 4)  # the SUM over options, averaged over questions
    # bins: 0.8 → [0.8, 0.9); 0.5 → [0.5, 0.6); 1.0 → the last bin; 0.7 → [0.7, 0.8): one question each
    assert overall["ece"] == pytest.approx(sum(abs(c - p) for c, p in zip(correct, confidence, strict=True)) / 4)
    assert point["score"]["ev_mae"] == pytest.approx(1.0)
    assert point["noul"]["questions"] == 2 and point["noul"]["accuracy"] == 1.0


def test_ece_adds_within_a_bin_before_taking_the_gap():
    judged = [m.Judged(case=i, kind="noul", predicted=[0.75, 0.25], gold=[float(i % 2), float(1 - i % 2)])
              for i in range(4)]
    point, _, _ = m.point_metrics(judged, cases=4, bins=10)
    assert point["overall"]["ece"] == pytest.approx(abs(2 - 4 * 0.75) / 4)
    coarse, _, _ = m.point_metrics(judged, cases=4, bins=1)
    assert coarse["overall"]["ece"] == pytest.approx(0.25)


def naive_metrics(judged: list[m.Judged], counts: np.ndarray, bins: int) -> dict[str, dict[str, float]]:
    """Straightforward recomputation: rebuild the resampled decisions and score them from scratch."""
    resampled = [m.Judged(case=copy, kind=j.kind, predicted=j.predicted, gold=j.gold, values=j.values)
                 for copy, case in enumerate(np.repeat(np.arange(len(counts)), counts.astype(int)))
                 for j in judged if j.case == case]
    point, _, _ = m.point_metrics(resampled, cases=int(counts.sum()), bins=bins)
    return point


def random_judged(rng: np.random.Generator, cases: int) -> list[m.Judged]:
    judged = []
    for case in range(cases):
        for kind, k in (("noul", 2), ("choice", 3), ("score", 5))[: rng.integers(1, 4)]:
            judged.append(m.Judged(case=case, kind=kind, predicted=list(rng.dirichlet(np.ones(k))),
                                   gold=list(rng.dirichlet(np.ones(k) * 0.5)),
                                   values=list(range(k)) if kind == "score" else None))
    return judged


def test_the_bootstrap_from_case_statistics_equals_rescoring_each_resample():
    rng = np.random.default_rng(5)
    judged = random_judged(rng, 40)
    stats = m.instance_statistics(judged, 10)
    table = m.case_statistics(stats, 40, 10)
    counts = m.resample_counts(np.random.default_rng(9), 40, 25)
    fast = m.metrics_from_sums(counts @ table, 10)
    for r in range(25):
        slow = naive_metrics(judged, counts[r], 10)
        for group, values in slow.items():
            for metric, value in values.items():
                assert fast[group][metric][r] == pytest.approx(value, abs=1e-9, nan_ok=True), (group, metric)


def test_intervals_are_reproducible_and_contain_the_point_estimate():
    judged = random_judged(np.random.default_rng(1), 60)
    first = m.score_decisions(judged, 60, resamples=300, seed=4)
    again = m.score_decisions(judged, 60, resamples=300, seed=4)
    other = m.score_decisions(judged, 60, resamples=300, seed=5)
    assert first == again and first != other
    for group in first.groups.values():
        for metric in (group.accuracy, group.kl, group.brier, group.ece):
            assert metric.ci_low <= metric.value <= metric.ci_high
    assert first.bootstrap_unit == "case" and first.groups["score"].ev_mae is not None
    assert sum(b.questions for b in first.groups["overall"].reliability) == first.groups["overall"].questions


@pytest.mark.parametrize("k", [2, 3, 5, 7, 10])
def test_one_hot_gold_closed_forms(k):
    judged = [m.Judged(case=0, kind="choice", predicted=[1 / k] * k, gold=[0.0] * (k - 1) + [1.0])]
    closed = closed_forms(judged)["overall"]
    assert closed["brier"] == pytest.approx(1 - 1 / k)
    assert closed["kl"] == pytest.approx(math.log(k))
    point, _, _ = m.point_metrics(judged, cases=1)
    assert point["overall"]["brier"] == pytest.approx(1 - 1 / k, abs=1e-12)
    assert point["overall"]["kl"] == pytest.approx(math.log(k), abs=1e-12)


def test_soft_gold_closed_forms():
    gold = [0.5, 0.3, 0.2]
    judged = [m.Judged(case=0, kind="choice", predicted=[1 / 3] * 3, gold=gold)]
    closed = closed_forms(judged)["overall"]
    entropy = -sum(g * math.log(g) for g in gold)
    assert closed["brier"] == pytest.approx(sum(g * g for g in gold) - 1 / 3)
    assert closed["kl"] == pytest.approx(math.log(3) - entropy)
    assert closed["accuracy"] == 1.0  # the first option is the gold's most probable one


def test_the_self_check_passes_on_the_example_corpus_and_records_every_metric():
    check = run_self_check(read_decision_corpus(EXAMPLE_CORPUS))
    assert check.passed and check.questions == 46
    assert {(c.group, c.metric) for c in check.checks} >= {
        (g, metric) for g in ("overall", "noul", "choice", "score") for metric in ("brier", "kl", "accuracy", "ece")}
    assert ("score", "ev_mae") in {(c.group, c.metric) for c in check.checks}
    assert max(c.difference for c in check.checks) <= 1e-9


def test_the_self_check_catches_a_scorer_that_averages_brier_over_options(monkeypatch):
    corpus = read_decision_corpus(EXAMPLE_CORPUS)
    real = m.instance_statistics

    def averaged_brier(judged, bins=10):
        stats = real(judged, bins)
        stats["brier"] = stats["brier"] / np.array([len(j.gold) for j in judged])
        return stats

    monkeypatch.setattr(m, "instance_statistics", averaged_brier)
    check = run_self_check(corpus)
    assert not check.passed
    assert {c.metric for c in check.failures()} == {"brier"}


def test_uniform_answers_cover_every_gold_question():
    corpus = read_decision_corpus(EXAMPLE_CORPUS)
    judged = uniform_judged(corpus)
    assert len(judged) == corpus.gold_questions
    assert all(abs(sum(j.predicted) - 1) < 1e-12 for j in judged)
    assert json.loads(json.dumps([j.kind for j in judged])).count("choice") == 6


def test_a_decision_corpus_saved_as_a_json_array_with_a_byte_order_mark_reads_as_without_one(tmp_path: Path):
    """Before, the mark hid the array: the file was read as JSON lines, with a problem for each of its lines."""
    rows = [json.loads(line) for line in EXAMPLE_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    plain, marked = tmp_path / "array.json", tmp_path / "marked.json"
    plain.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert [r.id for r in read_decision_corpus(marked).rows] == [r.id for r in read_decision_corpus(plain).rows]
