"""Options of `mt-eval decide run` and `mt-eval grade` given values that would make the answer rules vacuous."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
RULES = REPO / "examples" / "rules-grader"
ADEQUACY = REPO / "examples" / "data" / "adequacy-decisions.jsonl"


@pytest.mark.parametrize("command", [["decide", "run", "--method", str(RULES), "--corpus", str(ADEQUACY)],
                                     ["grade", "card.json", "--grader", str(RULES)]])
@pytest.mark.parametrize("tolerance", ["1", "1.5"])
def test_a_tolerance_of_1_or_more_is_refused_before_anything_runs(tmp_path, capsys, command, tolerance):
    """Before, `--tolerance 1` took probabilities that are all 0 as an answer, and scored them (noul accuracy 1.0)."""
    with pytest.raises(SystemExit) as exited:
        main([*command, "--out", str(tmp_path / "out"), "--tolerance", tolerance])
    assert exited.value.code == 2
    assert (f"argument --tolerance: must be below 1, got {tolerance}: at 1 or more, probabilities that are all 0 "
            "would pass as a distribution") in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_tolerance_below_1_is_taken(tmp_path):
    assert main(["decide", "run", "--method", str(RULES), "--corpus", str(ADEQUACY), "--out", str(tmp_path / "out"),
                 "--tolerance", "0.5", "--resamples", "0", "--quiet"]) == 0


@pytest.mark.parametrize(("command", "said"), [
    (["grade", "export", "--out", "sheets"], "export needs the run card: `mt-eval grade export CARD --out DIR`"),
    (["grade", "import", "--key", "key.json", "--sheet", "s.csv"],
     "import needs the run card: `mt-eval grade import CARD --key KEY --sheet FILE`"),
])
def test_export_or_import_without_a_card_says_the_card_is_missing(tmp_path, monkeypatch, capsys, command, said):
    """Before, `grade export` and `grade import` with no card read "export" or "import" as the card, and said
    "grade needs --grader DIR"."""
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    err = capsys.readouterr().err
    assert said in err and "--grader" not in err


def test_decide_check_json_names_the_corpus_whether_or_not_it_can_be_read(tmp_path, capsys):
    """Before, only the report of a corpus that cannot be read had "corpus" and "readable": a script reading
    `report["readable"]` failed on every corpus that could be read."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n", encoding="utf-8")
    for corpus, status, readable in ((ADEQUACY, 0, True), (bad, 1, False)):
        assert main(["decide", "check", "--corpus", str(corpus), "--json"]) == status
        report = json.loads(capsys.readouterr().out)
        assert (report["passed"], report["corpus"], report["readable"]) == (status == 0, str(corpus), readable)
