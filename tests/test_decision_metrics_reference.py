"""The decision metrics against a plain reference written from their definitions (README, "Scoring a decision
method"), on random and adversarial answers: probabilities of exactly 0 and 1, ties, one row, one gold label for
all, soft gold, one to six options, mixed question types, and confidences on and just below the ECE bins' edges;
what a perfect and a uniform answer score; the bootstrap's intervals; and a results log whose probabilities list
the options in another order than the question's."""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from pathlib import Path

import numpy as np
import pytest

from mt_eval.cli import main
from mt_eval.decisions import metrics as m
from test_decide_run import CHOICE, NOUL, REVERSE, SCORE, card_of, run, write_corpus

TIE = 1e-12


def reference(judged: list[m.Judged], bins: int) -> dict[str, dict[str, float]]:
    """Every metric of every group with questions, question by question, as the definitions say."""
    out: dict[str, dict[str, float]] = {}
    for group in m.GROUPS:
        items = [j for j in judged if group in ("overall", j.kind)]
        if not items:
            continue
        totals = {"accuracy": 0.0, "kl": 0.0, "brier": 0.0, "ev_mae": 0.0}
        correct_in = [0.0] * bins
        confidence_in = [0.0] * bins
        for j in items:
            p, g = [float(x) for x in j.predicted], [float(x) for x in j.gold]
            top = 0
            for i in range(len(p)):  # the first most probable option
                if p[i] > p[top]:
                    top = i
            correct = 1.0 if g[top] >= max(g) - TIE else 0.0
            totals["accuracy"] += correct
            totals["kl"] += sum(gi * math.log(gi / max(pi, 1e-12)) for gi, pi in zip(g, p, strict=True) if gi > 0)
            totals["brier"] += sum((pi - gi) ** 2 for gi, pi in zip(g, p, strict=True))
            edge = bisect_right([b / bins for b in range(bins)], p[top]) - 1  # [b/B, (b+1)/B); the last has 1
            correct_in[edge] += correct
            confidence_in[edge] += p[top]
            if j.kind == "score":
                assert j.values is not None
                totals["ev_mae"] += abs(sum(pi * v for pi, v in zip(p, j.values, strict=True))
                                        - sum(gi * v for gi, v in zip(g, j.values, strict=True)))
        n = len(items)
        values = {"questions": float(n), "accuracy": totals["accuracy"] / n, "kl": totals["kl"] / n,
                  "brier": totals["brier"] / n,
                  "ece": sum(abs(c - f) for c, f in zip(correct_in, confidence_in, strict=True)) / n}
        if group == "score":
            values["ev_mae"] = totals["ev_mae"] / n
        out[group] = values
    return out


def distribution(rng: np.random.Generator, k: int, bins: int) -> list[float]:
    mode = int(rng.integers(7))
    if mode == 0:
        return list(rng.dirichlet(np.ones(k)))
    if mode == 1:  # one option certain
        one = [0.0] * k
        one[int(rng.integers(k))] = 1.0
        return one
    if mode == 2:  # all tied
        return [1 / k] * k
    if mode == 3:  # shares of a few annotators: ties between some options
        votes = rng.multinomial(int(rng.choice([1, 2, 3, 4, 6])), np.ones(k) / k)
        return list(votes / votes.sum())
    if mode == 4:  # concentrated near 0 and 1
        return list(rng.dirichlet(np.ones(k) * 0.05))
    # the top probability on an ECE bin edge, or just below one
    edge = int(rng.integers(max(1, math.ceil(bins / k)), bins + 1)) / bins
    top = np.nextafter(edge, 0) if mode == 5 else edge - 1e-10 * rng.random()
    rest = list(rng.dirichlet(np.ones(k - 1)) * (1 - top)) if k > 1 else []
    rest = [min(r, top) for r in rest]
    out = [top, *rest]
    rng.shuffle(out)
    return [float(x) for x in out]


def random_judged(rng: np.random.Generator, bins: int) -> tuple[list[m.Judged], int]:
    cases = int(rng.integers(1, 9))
    judged = []
    for case in range(cases):
        for _ in range(int(rng.integers(0, 4))):
            kind = ("noul", "choice", "score")[int(rng.integers(3))]
            k = 2 if kind == "noul" else int(rng.integers(1, 7))
            values = sorted(rng.choice(np.arange(-5, 20), k, replace=False).tolist()) if kind == "score" else None
            judged.append(m.Judged(case=case, kind=kind, predicted=distribution(rng, k, bins),
                                   gold=distribution(rng, k, bins), values=values))
    return judged, cases


def assert_agrees(judged: list[m.Judged], cases: int, bins: int) -> None:
    point, _, _ = m.point_metrics(judged, cases, bins)
    expected = reference(judged, bins)
    assert {g for g, v in point.items() if v["questions"] > 0} == set(expected)
    for group, values in expected.items():
        for metric, value in values.items():
            assert point[group][metric] == pytest.approx(value, rel=1e-9, abs=1e-9), (group, metric, bins)


def test_the_metrics_agree_with_the_reference_on_random_and_adversarial_answers():
    rng = np.random.default_rng(20261207)
    for _ in range(1000):
        bins = int(rng.choice([1, 2, 3, 5, 7, 10, 15, 49, 100, 1000]))
        judged, cases = random_judged(rng, bins)
        if judged:
            assert_agrees(judged, cases, bins)


@pytest.mark.parametrize(("confidence", "bins", "expected"), [
    (0.7999999999, 10, 7), (float(np.nextafter(0.8, 0)), 10, 7), (0.8, 10, 8), (0.5 - 1e-10, 2, 0), (0.5, 2, 1),
    (1 / 49, 49, 1), (1.0, 10, 9), (0.0, 10, 0), (float(np.nextafter(1.0, 0)), 1000, 999), (1 / 3, 3, 1)])
def test_a_confidence_is_in_the_bin_whose_edges_hold_it(confidence, bins, expected):
    """Before: 0.7999999999 was put in [0.8, 0.9) (and 0.4999999999 of 2 bins in [0.5, 1]): the bin's index was
    the floor of confidence × B + 1e-9, so a confidence within 1e-9 / B below an edge was counted above it."""
    assert m.ece_bins(np.array([confidence]), bins).tolist() == [expected]
    assert bisect_right([b / bins for b in range(bins)], confidence) - 1 == expected  # (the reference's rule)


def test_ece_counts_a_confidence_just_below_an_edge_with_the_bin_below():
    judged = [m.Judged(case=0, kind="noul", predicted=[0.7999999999, 0.2000000001], gold=[1.0, 0.0]),
              m.Judged(case=1, kind="noul", predicted=[0.75, 0.25], gold=[0.0, 1.0])]
    point, _, _ = m.point_metrics(judged, 2, 10)
    # one bin, [0.7, 0.8): |1 + 0 − 0.7999999999 − 0.75| / 2
    assert point["overall"]["ece"] == pytest.approx(abs(1 - 0.7999999999 - 0.75) / 2, abs=1e-12)


def test_a_perfect_answer_scores_accuracy_1_and_no_loss_and_a_uniform_one_its_closed_forms():
    rng = np.random.default_rng(3)
    perfect, uniform = [], []
    for case in range(30):
        k = int(rng.integers(2, 6))
        gold = [0.0] * k
        gold[int(rng.integers(k))] = 1.0
        perfect.append(m.Judged(case=case, kind="choice", predicted=gold, gold=gold))
        uniform.append(m.Judged(case=case, kind="choice", predicted=[1 / k] * k, gold=gold))
    scored = m.score_decisions(perfect, 30, resamples=50).groups["overall"]
    assert (scored.accuracy.value, scored.kl.value, scored.brier.value, scored.ece.value) == (1.0, 0.0, 0.0, 0.0)
    point, _, _ = m.point_metrics(uniform, 30)
    ks = [len(j.gold) for j in uniform]
    assert point["overall"]["brier"] == pytest.approx(np.mean([1 - 1 / k for k in ks]))
    assert point["overall"]["kl"] == pytest.approx(np.mean([math.log(k) for k in ks]))
    assert point["overall"]["accuracy"] == pytest.approx(np.mean([j.gold[0] == 1.0 for j in uniform]))


def test_a_confident_wrong_answer_costs_the_floor_and_one_row_of_one_label_scores():
    judged = [m.Judged(case=0, kind="noul", predicted=[0.0, 1.0], gold=[1.0, 0.0])]
    scored = m.score_decisions(judged, 1, resamples=20)
    overall = scored.groups["overall"]
    assert overall.kl.value == pytest.approx(-math.log(1e-12), abs=1e-6)  # ~27.63, not infinity
    assert (overall.accuracy.value, overall.brier.value, overall.ece.value) == (0.0, 2.0, 1.0)
    assert (overall.accuracy.ci_low, overall.accuracy.ci_high) == (0.0, 0.0)  # one case: every resample the same


def test_the_bootstrap_is_the_same_for_the_same_seed_and_its_intervals_hold_the_means():
    rng = np.random.default_rng(11)
    judged = [m.Judged(case=c, kind=kind, predicted=list(rng.dirichlet(np.ones(k))), gold=gold,
                       values=list(range(k)) if kind == "score" else None)
              for c in range(60) for kind, k in (("noul", 2), ("score", 4))
              for gold in [list(np.eye(k)[int(rng.integers(k))])]]
    first = m.score_decisions(judged, 60, resamples=300, seed=7)
    assert first == m.score_decisions(judged, 60, resamples=300, seed=7)
    assert first != m.score_decisions(judged, 60, resamples=300, seed=8)
    for group in first.groups.values():
        for name in ("accuracy", "kl", "brier", "ev_mae"):  # (means: ECE's resamples are biased upwards)
            value = getattr(group, name)
            if value is not None:
                assert value.ci_low is not None and value.ci_high is not None
                assert value.ci_low <= value.value <= value.ci_high, name


def rows_with_gold() -> list[dict]:
    prefer = ["true", "a", "3", "false", "tie", "1"]  # (the other questions of the row: every option tied)
    return [{"id": f"r{i}", "state": {"text": f"row {i}", "prefer": prefer[i]},
             "questions": {"adequate": NOUL, "better": CHOICE, "quality": SCORE},
             "gold": {"adequate": "true" if i % 2 else "false", "better": ["a", "b", "tie"][i % 3],
                      "quality": {"0": 0.0, "1": 0.0, "2": 0.5, "3": 0.5, "4": 0.0}}} for i in range(6)]


def rewrite_log(log: Path, change) -> None:
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for result in lines:
        for answer in result["answers"].values():
            if answer.get("probabilities"):
                answer["probabilities"] = change(answer["probabilities"])
    log.write_text("".join(json.dumps(result) + "\n" for result in lines), encoding="utf-8")


def test_a_results_log_whose_probabilities_list_the_options_in_another_order_scores_the_same(tmp_path):
    """Before: the card rewritten on --resume read each answer's probabilities in the order the log lists them and
    scored them against gold in the question's order (a log rewritten with sorted keys: accuracy 1.0 became 0.0)."""
    corpus = write_corpus(tmp_path / "c.jsonl", rows_with_gold())
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    decided = card_of(out)["metrics"]["groups"]
    rewrite_log(out / "results.jsonl", lambda p: dict(reversed(list(p.items()))))
    (out / "card.json").unlink()
    assert run(REVERSE, corpus, out, "--resume") == 0
    assert card_of(out)["metrics"]["groups"] == decided


def test_a_results_log_that_names_other_options_is_refused_naming_the_row(tmp_path, capsys):
    """Before: "mt-eval decide: could not broadcast input array from shape (2,) into shape (1,)"."""
    corpus = write_corpus(tmp_path / "c.jsonl", rows_with_gold())
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    rewrite_log(out / "results.jsonl", lambda p: {k: v for k, v in p.items() if k != "false"})
    (out / "card.json").unlink()
    capsys.readouterr()
    assert main(["decide", "run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(out), "--quiet",
                 "--resamples", "100", "--resume"]) != 0
    err = capsys.readouterr().err
    assert 'row "r0", question "adequate": the recorded probabilities name "true", not the options "true", ' \
           '"false"' in err
    assert "--resume" in err and "broadcast" not in err
