"""`mt_eval.harness.paired_tests`: sacrebleu's paired bootstrap and approximate randomization from segment
statistics — the same p-values as sacrebleu's own `PairedTest`, however the draws are split, in memory that
does not grow with the resamples."""

from __future__ import annotations

import json
import random
import tracemalloc

import numpy as np
import pytest
from sacrebleu.significance import PairedTest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness import metric_statistics
from mt_eval.harness import paired_tests as module
from mt_eval.harness.paired_tests import paired_tests
from mt_eval.harness.scoring import make_metrics, segment_statistics
from rigor_support import family_corpus, honest, run

WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "house", "big", "small", "red", "blue", "runs", "slowly"]


def _systems(segments: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))

    references = [sentence() for _ in range(segments)]
    a = [r if rng.random() < 0.5 else sentence() for r in references]
    b = [r if rng.random() < 0.6 else sentence() for r in references]
    return a, b, references


def _sacrebleu(a: list[str], b: list[str], references: list[str], resamples: int, trials: int, monkeypatch
               ) -> dict[str, tuple[float, float, float, float]]:
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    _, bs = PairedTest([("A", a), ("B", b)], make_metrics(), [references], test_type="bs", n_samples=resamples)()
    _, ar = PairedTest([("A", a), ("B", b)], make_metrics(), [references], test_type="ar", n_samples=trials)()
    keys = [key for key in bs if key != "System"]
    return {name: (bs[key][0].score, bs[key][1].score, bs[key][1].p_value, ar[key][1].p_value)
            for name, key in zip(make_metrics(), keys, strict=True)}


@pytest.mark.parametrize("segments", [1, 37, 300])
@pytest.mark.parametrize("split", ["at once", "a few rows at a time"])
def test_the_p_values_are_sacrebleus_own(segments: int, split: str, monkeypatch):
    a, b, references = _systems(segments, seed=segments)
    expected = _sacrebleu(a, b, references, 200, 1000, monkeypatch)
    if split != "at once":  # resamples drawn 50 at a time; trials' flips 32 at a time (a multiple of 32 is needed)
        monkeypatch.setattr(module, "_CELLS", 50 * segments)
    for name, metric in make_metrics().items():
        stats_a = segment_statistics(metric, a, [references])
        stats_b = segment_statistics(metric, b, [references])
        got = paired_tests(metric, stats_a, stats_b, resamples=200, trials=1000, seed=12345)
        a_score, b_score, p_bootstrap, p_randomization = expected[name]
        if segments == 1:  # every trial ties the observed difference: it counts here, not in sacrebleu; and every
            p_randomization = p_bootstrap = 1.0  # resample is that segment: sacrebleu's 1/(n+1) tests nothing
        assert (got.a, got.b, got.p_bootstrap, got.p_randomization) == (a_score, b_score, p_bootstrap,
                                                                         p_randomization), name


def test_a_clear_difference_is_significant_and_none_is_not():
    metric = make_metrics()["BLEU"]
    a, _, references = _systems(200, seed=1)
    stats_ref = segment_statistics(metric, references, [references])
    stats_a = segment_statistics(metric, a, [references])
    clear = paired_tests(metric, stats_a, stats_ref, resamples=300, trials=300, seed=1)
    assert clear.b == pytest.approx(100) and clear.a < 80
    assert clear.p_bootstrap < 0.01 and clear.p_randomization < 0.01
    same = paired_tests(metric, stats_a, stats_a.copy(), resamples=300, trials=300, seed=1)
    # every resample differs by 0, the observed difference (sacrebleu's count gives 1/(n + 1)), and every trial
    # ties it: p = 1 (compare reports two runs with the same outputs as such without testing them)
    assert same.a == same.b and same.p_bootstrap == 1 and same.p_randomization == 1


@pytest.mark.parametrize("differing", [1, 2, 3])
def test_runs_differing_on_a_few_segments_are_not_significant(differing: int):
    """A trial has one of 2**k outcomes, and the observed difference is the largest of them: sacrebleu counts only
    trials beyond it and called one differing segment of fifty significant at p = 1/(trials + 1)."""
    metric = make_metrics()["chrF++"]
    a, _, references = _systems(50, seed=4)
    b = list(a)
    for i in range(differing):
        b[i] = references[i] if a[i] != references[i] else "completely other words"
    stats_a, stats_b = (segment_statistics(metric, side, [references]) for side in (a, b))
    got = paired_tests(metric, stats_a, stats_b, resamples=300, trials=1000, seed=1)
    assert got.a != got.b and got.p_randomization >= 2 / 2 ** differing - 0.1
    assert got.p_randomization > 0.05


def test_a_single_scored_entry_is_no_evidence_in_either_test(tmp_path, capsys):
    """Two runs of one scored entry that differ: every resample is that entry and every trial ties the observed
    difference, so neither test has anything to say (sacrebleu's bootstrap gave p = 1/(n+1) for each metric)."""
    corpus = family_corpus(tmp_path / "one.json", scored=1, canaries=0, negatives=0)
    for name, answer in (("a", "Frase."), ("b", "Frase número 0.")):
        assert run(tmp_path / name, corpus, *honest(translate={"Sentence number 0.": answer}), *LENIENT)[0] == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a" / "card.json"), str(tmp_path / "b" / "card.json"), "--json",
                 "--quiet", "--bootstrap", "100", "--trials", "100", "--allow-diff", "params"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(row["metric"], row["delta"] > 0, row["p_bootstrap"], row["p_randomization"]) for row in rows] == [
        ("chrF++", True, 1, 1), ("BLEU", True, 1, 1), ("TER", False, 1, 1)]


def test_memory_stays_flat_for_a_large_corpus():
    """Two hundred thousand segments: sacrebleu's draws alone would take 1.6 GB (a thousand resamples of 8-byte
    indices), its gathered statistics several times that. Here, a few resamples at a time."""
    rng = np.random.default_rng(0)
    segments = 200_000
    metric = make_metrics()["chrF++"]
    width = len(metric._extract_corpus_statistics(["a"], [["a"]])[0])
    stats_a = rng.integers(0, 30, size=(segments, width)).astype(np.uint16)
    stats_b = np.minimum(stats_a + rng.integers(0, 2, size=(segments, width)).astype(np.uint16), 40)
    tracemalloc.start()
    try:
        result = paired_tests(metric, stats_a, stats_b, resamples=100, trials=96, seed=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 80 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert 0 < result.p_bootstrap <= 1 and 0 < result.p_randomization <= 1


def test_the_interval_of_the_difference_is_taken_over_the_bootstraps_own_resamples():
    metric = make_metrics()["chrF++"]
    a, b, references = _systems(60, seed=4)
    stats_a, stats_b = segment_statistics(metric, a, [references]), segment_statistics(metric, b, [references])
    got = paired_tests(metric, stats_a, stats_b, resamples=300, trials=64, seed=9)
    # as sacrebleu draws and sums them: all resamples at once, each one's float32 statistics gathered and summed
    draws = np.random.default_rng(9).choice(60, size=(300, 60), replace=True)
    scored = [[metric._compute_score_from_stats(stats.astype(np.float32)[row].sum(0)).score for row in draws]
              for stats in (stats_a, stats_b)]
    low, high = np.percentile(np.array(scored[1]) - np.array(scored[0]), [2.5, 97.5])
    assert (got.low, got.high) == (round(float(low), 4), round(float(high), 4))
    assert got.low <= got.b - got.a <= got.high
    same = paired_tests(metric, stats_a, stats_a.copy(), resamples=50, trials=32, seed=9)
    assert same.low == same.high == 0


@pytest.mark.parametrize("largest", [40, 65_535])
def test_swapped_statistics_are_summed_exactly(largest: int, monkeypatch):
    """A trial's swapped statistics, ``flips @ (A − B)``: small counts are multiplied in float32 (exact), counts
    whose sums pass 2**23 in float64."""
    monkeypatch.setattr(metric_statistics, "_SUM_BLOCK", 1000)
    rng = np.random.default_rng(largest)
    stats_a = rng.integers(largest // 2, largest, size=(2500, 5)).astype(np.uint16)  # A − B mostly large
    stats_b = rng.integers(0, largest // 2, size=(2500, 5)).astype(np.uint16)
    flips = rng.integers(2, size=(40, 2500), dtype=bool)
    exact = (flips.astype(np.int64) @ (stats_a.astype(np.int64) - stats_b.astype(np.int64))).astype(np.float64)
    assert np.array_equal(metric_statistics.weighted_sums(flips, stats_a, minus=stats_b), exact)
    floats = metric_statistics.weighted_sums(flips, stats_a.astype(np.float64), minus=stats_b.astype(np.float64))
    assert np.array_equal(floats, exact)
