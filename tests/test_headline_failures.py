"""What a headline says about the scored entries that produced nothing: a run whose every scored entry failed has
no scores and no headline (only canaries or negative controls were translated), and a headline over entries that
failed or were abstained on says how many of them count as empty translations."""

from __future__ import annotations

import json
from pathlib import Path

from mt_eval.cli import main
from rigor_support import family_corpus, honest, run


def test_a_run_whose_every_scored_entry_failed_has_no_scores_and_no_headline(tmp_path: Path, capsys):
    corpus = family_corpus(tmp_path / "corpus.json")
    every_scored = [f"s{i:02d}" for i in range(30)]
    code, card = run(tmp_path / "run", corpus, *honest(fail=every_scored), "--max-errors", "100%")
    out = capsys.readouterr().out
    assert card is not None and card.status == "partial"  # the canaries were translated
    assert card.metrics is None  # never a chrF++ of 0.00 that looks like a result
    assert code == 5  # within --max-errors, but the gate withholds the headline
    assert "not scored: no scored entry was translated: all 30 failed" in out
    assert "headline withheld" in out and "headline:" not in out and "chrF++ 0.00" not in out
    assert main(["gate", str(tmp_path / "run" / "card.json"), "--json"]) == 1
    [verdict] = json.loads(capsys.readouterr().out)
    assert verdict["headline"] is None
    scored = next(c for c in verdict["checks"] if c["rule"] == "scored")
    assert not scored["passed"] and "no scored entry was translated" in scored["details"][0]


def test_a_headline_says_how_many_scored_entries_failed_or_were_abstained_on(tmp_path: Path, capsys):
    corpus = family_corpus(tmp_path / "corpus.json")
    failing = [f"s{i:02d}" for i in range(1, 30)]
    code, card = run(tmp_path / "most", corpus, *honest(fail=failing), "--max-errors", "100%")
    out = capsys.readouterr().out
    assert code == 0 and card is not None and card.metrics is not None
    assert "over 30 scored entries, of which 29 failed: scored as empty translations (gate passed" in out

    abstaining = ["n0", "n1", "s03"]
    code, card = run(tmp_path / "abstained", corpus, *honest(fail=["s01", "s02"], abstain=abstaining),
                     "--max-errors", "2")
    out = capsys.readouterr().out
    assert code == 0
    assert ("over 30 scored entries, of which 2 failed and 1 was abstained on: scored as empty translations"
            in out)

    code, card = run(tmp_path / "clean", corpus, *honest())
    out = capsys.readouterr().out
    assert code == 0 and "over 30 scored entries (gate passed" in out


def test_a_run_that_abstained_on_every_scored_entry_it_did_not_fail_has_no_scores_and_no_headline(tmp_path: Path,
                                                                                                   capsys):
    corpus = family_corpus(tmp_path / "corpus.json")
    abstaining = ["n0", "n1", *(f"s{i:02d}" for i in range(2, 30))]
    code, card = run(tmp_path / "run", corpus, *honest(fail=["s00", "s01"], abstain=abstaining),
                     "--max-errors", "100%")
    out = capsys.readouterr().out
    assert card is not None and card.metrics is None  # an abstention is no translation: never a chrF++ of 0.00
    assert code == 5
    assert "not scored: no scored entry was translated: of 30, 28 abstained on and 2 failed" in out
    assert "headline withheld" in out and "chrF++ 0.00" not in out
    assert main(["verify", str(tmp_path / "run" / "card.json")]) == 0
