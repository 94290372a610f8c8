"""Rankings against hand-computed tables: interval ties, Borda points and task averages, missing corpora."""

from __future__ import annotations

import pytest

from mt_eval.leaderboard.ranking import Scored, borda, fractional_positions, normalised, rank_group, task_average


def test_ranks_count_the_rows_wholly_above_and_overlaps_are_ties():
    # score [low, high]:  A 70 [65, 75]  B 72 [68, 76]  C 60 [55, 64]  D 50 [49, 51]  E 64.5 (no interval)
    placed = rank_group([Scored("A", 70, 65, 75), Scored("B", 72, 68, 76), Scored("C", 60, 55, 64),
                         Scored("D", 50, 49, 51), Scored("E", 64.5)])
    # rank(A) = 1 + #{low > 75} = 1; rank(E) = 1 + #{low > 64.5} = 1 + |{A, B}| = 3; rank(C) = 1 + |{A, B, E}| = 4
    assert [(p.key, p.rank, p.ties) for p in placed] == [
        ("B", 1, 1), ("A", 1, 1), ("E", 3, 0), ("C", 4, 0), ("D", 5, 0)]


def test_lower_is_better_metrics_rank_the_lowest_first():
    placed = rank_group([Scored("Y", 31, 29, 33, higher_is_better=False),
                         Scored("X", 30, 28, 32, higher_is_better=False),
                         Scored("Z", 50, 45, 55, higher_is_better=False)])
    assert [(p.key, p.rank, p.ties) for p in placed] == [("X", 1, 1), ("Y", 1, 1), ("Z", 3, 0)]


def test_ties_and_ranks_match_the_pairwise_definition_on_random_intervals():
    import random

    rng = random.Random(3)
    entries = []
    for i in range(300):
        score = rng.uniform(0, 100)
        width = rng.choice([0, 0.5, 3, 10])
        entries.append(Scored(f"e{i}", score, score - width * rng.random(), score + width * rng.random()))
    for place in rank_group(entries):
        me = next(e for e in entries if e.key == place.key)
        _, low, high = me.oriented()
        assert place.rank == 1 + sum(o.oriented()[1] > high for o in entries)
        assert place.ties == sum(o.key != me.key and o.oriented()[1] <= high and low <= o.oriented()[2]
                                 for o in entries)


def test_equal_scores_share_the_mean_of_their_positions():
    assert fractional_positions({"a": 50, "b": 70, "c": 50, "d": 10}) == {"b": 1, "a": 2.5, "c": 2.5, "d": 4}


TABLE = {  # method → corpus → score; c3 is scored with a lower-is-better metric; m3 never ran c3
    "m1": {"c1": 80, "c2": 50, "c3": 30},
    "m2": {"c1": 70, "c2": 50, "c3": 35},
    "m3": {"c1": 60, "c2": 40},
}
ORIENTATION = {"c1": True, "c2": True, "c3": False}


def test_borda_gives_100_to_first_0_to_last_and_averages_with_equal_weight():
    result = borda(TABLE, ["c1", "c2", "c3"], ORIENTATION)
    # c1: positions 1, 2, 3 → 100, 50, 0.  c2: m1 and m2 share 1.5 → 75, 75; m3 → 0.  c3 (lower better, n = 2):
    # m1 → 100, m2 → 0.  m1 = (100 + 75 + 100) / 3, m2 = (50 + 75 + 0) / 3; m3 lacks c3: no Borda at all.
    assert result["m1"].per_corpus == {"c1": 100, "c2": 75, "c3": 100}
    assert result["m1"].value == pytest.approx(275 / 3)
    assert result["m2"].value == pytest.approx(125 / 3)
    assert result["m3"].value is None and result["m3"].missing == ["c3"]
    assert result["m3"].per_corpus == {"c1": 0, "c2": 0}


def test_borda_with_one_method_on_a_corpus_gives_it_100():
    assert borda({"solo": {"c": 12.0}}, ["c"])["solo"].value == 100


def test_task_average_normalises_then_averages_per_family_then_across_families():
    families = {"c1": "eng>spa", "c2": "eng>spa", "c3": "eng>fra"}
    result = task_average(TABLE, families, ORIENTATION)
    # m1: eng>spa (80 + 50) / 2 = 65; eng>fra 100 - 30 = 70; (65 + 70) / 2 = 67.5
    assert result["m1"].per_family == {"eng>spa": 65, "eng>fra": 70}
    assert result["m1"].value == pytest.approx(67.5)
    # m2: (70 + 50) / 2 = 60; 100 - 35 = 65 → 62.5
    assert result["m2"].value == pytest.approx(62.5)
    # m3 lacks c3: missing, not averaged over the two corpora it has
    assert result["m3"].value is None and result["m3"].missing == ["c3"]
    assert result["m3"].per_family == {"eng>spa": 50}


def test_a_family_is_weighted_once_however_many_corpora_it_has():
    table = {"m": {"a1": 90, "a2": 90, "a3": 90, "b": 30}}
    assert task_average(table, {"a1": "A", "a2": "A", "a3": "A", "b": "B"})["m"].value == pytest.approx(60)


def test_normalised_scores_stay_within_0_and_100():
    assert normalised(120, True) == 100 and normalised(130, False) == 0 and normalised(25, False) == 75
