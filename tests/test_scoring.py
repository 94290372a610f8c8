"""Scores match sacrebleu's published values; intervals come from segment statistics and are reproducible."""

from __future__ import annotations

import random

import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from mt_eval.harness.scoring import score

# The example in sacrebleu's README ("Using SacreBLEU from Python"): two reference streams.
README_REFS = [["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
               ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."]]
README_SYS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]


def by_name(scores):
    return {m.name: m for m in scores.metrics}


def test_published_bleu_and_chrf_values():
    published = score(README_SYS, README_REFS, resamples=0, metrics={"BLEU": BLEU(), "chrF": CHRF()})
    assert by_name(published)["BLEU"].score == pytest.approx(48.53, abs=0.005)
    assert by_name(published)["chrF"].score == pytest.approx(59.73, abs=0.005)


@pytest.mark.parametrize(("hypothesis", "reference", "ter"), [
    ("aaaa bbbb cccc dddd", "aaaa bbbb cccc dddd", 0.0),
    ("dddd eeee ffff", "aaaa bbbb cccc", 100.0),
    ("d e f g h a b c", "a b c d e f g h", 12.5),  # one shift fixes it
])
def test_published_ter_values(hypothesis, reference, ter):
    assert by_name(score([hypothesis], [[reference]], resamples=0))["TER"].score == pytest.approx(ter, abs=0.001)


def corpus(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    words = ["the", "cat", "sat", "on", "a", "mat", "with", "the", "dog", "near", "our", "big", "red", "house", "today"]
    refs = [" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))) for _ in range(n)]
    hyps = [" ".join(w if rng.random() < 0.75 else rng.choice(words) for w in r.split()) for r in refs]
    return hyps, refs


def test_corpus_scores_equal_sacrebleu_and_carry_signatures():
    hyps, refs = corpus(300)
    scores = by_name(score(hyps, [refs], resamples=200))
    assert scores["chrF++"].score == pytest.approx(CHRF(word_order=2).corpus_score(hyps, [refs]).score, abs=1e-4)
    assert scores["BLEU"].score == pytest.approx(BLEU().corpus_score(hyps, [refs]).score, abs=1e-4)
    assert scores["TER"].score == pytest.approx(TER().corpus_score(hyps, [refs]).score, abs=1e-4)
    assert scores["chrF++"].signature.startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2")
    assert scores["TER"].higher_is_better is False


def test_intervals_bracket_the_score_are_seeded_and_narrow_with_more_data():
    hyps, refs = corpus(400)
    first = score(hyps, [refs], resamples=300, seed=1)
    again = score(hyps, [refs], resamples=300, seed=1)
    other_seed = score(hyps, [refs], resamples=300, seed=2)
    assert first == again
    assert first.bootstrap_seed == 1 and first.bootstrap_resamples == 300
    for metric in first.metrics:
        assert metric.ci_low <= metric.score <= metric.ci_high
    assert by_name(first)["BLEU"].ci_low != by_name(other_seed)["BLEU"].ci_low
    small = by_name(score(hyps[:40], [refs[:40]], resamples=300, seed=1))["chrF++"]
    large = by_name(first)["chrF++"]
    assert large.ci_high - large.ci_low < small.ci_high - small.ci_low


def test_bootstrap_matches_resampling_the_corpus_directly():
    """The multinomial-count shortcut gives the same distribution as re-scoring resampled corpora."""
    import numpy as np

    hyps, refs = corpus(60)
    ours = by_name(score(hyps, [refs], resamples=400, seed=3))["chrF++"]
    rng = np.random.default_rng(3)
    direct = []
    metric = CHRF(word_order=2)
    for _ in range(400):
        idx = rng.integers(0, len(hyps), len(hyps))
        direct.append(metric.corpus_score([hyps[i] for i in idx], [[refs[i] for i in idx]]).score)
    low, high = np.percentile(direct, [2.5, 97.5])
    assert ours.ci_low == pytest.approx(low, abs=1.5)
    assert ours.ci_high == pytest.approx(high, abs=1.5)


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="2 hypotheses but a reference stream of 1"):
        score(["a", "b"], [["a"]])


def test_scoring_says_what_it_scores_as_it_starts_and_how_long_it_took(monkeypatch):
    """A large corpus's intervals take minutes: the run said nothing between its last translation and its summary."""
    import io

    from mt_eval.harness import scoring
    from mt_eval.harness.scoring import ListedSegments, score_segments

    hyps, refs = corpus(12)
    said = io.StringIO()
    score_segments(ListedSegments(hyps, [refs]), 12, resamples=50, stream=said)
    assert said.getvalue() == ("scoring 12 entries: chrF++, BLEU, TER; 95% intervals from 50 bootstrap resamples "
                               "(fast)\n")
    monkeypatch.setattr(scoring, "_SAID_AFTER_S", 0.0)
    said = io.StringIO()
    score_segments(ListedSegments(hyps[:1], [refs[:1]]), 1, resamples=0, stream=said, metrics={"BLEU": BLEU()})
    first, then = said.getvalue().splitlines()
    assert (first, then.startswith("scored in ")) == ("scoring 1 entry: BLEU; no intervals", True)
