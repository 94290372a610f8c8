"""`mt-eval compare` of two cards whose latencies were measured with different plans (``--latency-warmup``,
``--latency-sample``, ``--latency-repetitions``). Before, only the hardware label was checked: a hot p95 over 2
calls after no warm-up was put beside one over 30 calls after 3, as if the two were comparable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
from rigor_support import family_corpus, honest, run


@pytest.fixture
def cards(tmp_path: Path) -> tuple[Path, Path]:
    corpus = family_corpus(tmp_path / "corpus.json")
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest(), "--latency-warmup", "0", "--latency-sample", "2",
               "--latency-repetitions", "1")[0] == 0
    return tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"


def compare(a: Path, b: Path, *args: str) -> int:
    return main(["compare", str(a), str(b), "--bootstrap", "100", "--trials", "100", "--quiet", *args])


def test_latencies_measured_with_different_plans_are_not_put_side_by_side(cards: tuple[Path, Path], capsys):
    a, b = cards
    capsys.readouterr()
    assert compare(a, b) == 0  # the scores are compared, the latencies are not
    out = capsys.readouterr().out
    assert ("latency: not compared: the latencies were measured differently (A: 3 warm-up calls, 10 entries timed 3 "
            "times; B: 0 warm-up calls, 2 entries timed once): they are compared only when measured alike: run both "
            "with the same --latency-warmup, --latency-sample and --latency-repetitions (--allow-diff latency_plan "
            "compares them anyway)") in out
    assert "hot p95 A" not in out
    assert compare(a, b, "--json") == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert latency["compared"] is False and latency["same_plan"] is False and "a" not in latency
    assert latency["plans"] == {"a": "3 warm-up calls, 10 entries timed 3 times",
                                "b": "0 warm-up calls, 2 entries timed once"}


def test_allowed_the_different_plans_are_compared_and_said_to_differ(cards: tuple[Path, Path], capsys):
    a, b = cards
    capsys.readouterr()
    assert compare(a, b, "--allow-diff", "latency_plan") == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("latency"))
    assert "; measured differently, allowed: A 3 warm-up calls, 10 entries timed 3 times, B 0 warm-up calls, 2 " \
           "entries timed once): cold A " in line
    assert compare(a, b, "--allow-diff", "latency_plan", "--json") == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert latency["compared"] is True and latency["same_plan"] is False and latency["b"]["hot_calls"] == 2


def test_the_same_plan_compares_as_before(cards: tuple[Path, Path], capsys):
    a, _ = cards
    capsys.readouterr()
    assert compare(a, a, "--json") == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert latency["compared"] is True and latency["same_plan"] is True
