"""`mt-eval verify`: a card says how its run ended — ``status``, ``failures``, ``results_log`` — and has a result for
every entry it ran. A card whose entries failed, resealed without those fields or without the failed entries,
would read as a clean run: it does not verify, and the missing field or entry is named at its JSON path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from rigor_support import edit_card
from verify_support import REVERSE, run_with_failures, write_corpus

OLDER = ("every run card mt-eval writes states it, and this one is from an older mt-eval (0.1.0 before 1 December "
         "2026) or had it taken out: without it, how the run ended cannot be checked")
OLDER_FIX = ("fix: run the evaluation again with this mt-eval (`mt-eval run --method METHOD --corpus CORPUS`, with the "
             "run's settings) for a card it can verify: no command adds these fields to an existing card")


@pytest.fixture(scope="module")
def listed(tmp_path_factory) -> Path:
    """A partial run's card that lists its results."""
    return run_with_failures(tmp_path_factory.mktemp("listed"))


@pytest.fixture(scope="module")
def logged(tmp_path_factory) -> Path:
    """A partial run's card that references its results.jsonl."""
    return run_with_failures(tmp_path_factory.mktemp("logged"), "--embed-results", "never")


def verify(path: Path, capsys) -> tuple[int, str]:
    """``mt-eval verify PATH``'s exit status and output."""
    code = main(["verify", str(path)])
    return code, capsys.readouterr().out


def without(*names: str):
    def change(data: dict) -> None:
        for name in names:
            data.pop(name)
    return change


def test_the_cards_as_the_runs_wrote_them_verify(listed: Path, logged: Path, capsys):
    for path in (listed, logged):
        data = json.loads(path.read_text())
        assert data["status"] == "partial" and data["failures"][0]["count"] == 3
        assert verify(path, capsys)[0] == 0


def test_a_card_without_its_status_does_not_verify(listed: Path, capsys):
    code, out = verify(edit_card(listed, without("status", "results_log")), capsys)
    assert code == 1 and "does not verify (2 problems)" in out
    assert f'$.status: the card has no "status" (complete, partial or failed): {OLDER}' in out
    assert '$.results_log: the card has no "results_log"' in out and OLDER_FIX in out


def test_a_card_whose_entries_failed_without_its_failures_does_not_verify(listed: Path, capsys):
    """Before, this card of a run where 3 of 8 entries failed, resealed without status, failures and results_log,
    verified: it read as a clean run."""
    code, out = verify(edit_card(listed, without("status", "failures", "results_log")), capsys)
    assert code == 1 and "does not verify (3 problems)" in out
    assert f'$.failures: the card has no "failures" (the errors of the entries that failed): {OLDER}' in out
    assert '$.status: the card has no "status"' in out and '$.results_log: the card has no "results_log"' in out
    assert out.count(OLDER_FIX) == 3 and "✗ schema" in out


def test_a_card_whose_results_are_in_its_log_without_results_log_does_not_verify(logged: Path, capsys):
    code, out = verify(edit_card(logged, without("results_log")), capsys)
    assert code == 1
    assert (f'$.results_log: the card has no "results_log" (whether its results are in it or in results.jsonl): '
            f"{OLDER}") in out
    assert ("$.results: 8 of the corpus's 8 entries have no result (e.g. 'e0'): a run writes one for every entry it "
            "runs, a failed one too") in out


def test_a_complete_card_with_its_failed_entries_taken_out_does_not_verify(listed: Path, capsys):
    def complete(data: dict) -> None:
        data["results"] = [result for result in data["results"] if result.get("error") is None]
        data["corpus"]["entries"] = data["metrics"]["segments"] = len(data["results"])
        data.update(status="complete", failures=[], errors=0)

    code, out = verify(edit_card(listed, complete), capsys)
    assert code == 1 and "corpus.json: 3 of its entries have no result" in out
    assert ("$.results: 3 of the corpus's 8 entries have no result (e.g. 'e0'): a run writes one for every entry it "
            "runs, a failed one too; yet the card says the run was complete ($.status)") in out


def test_an_entry_of_a_selection_taken_out_does_not_verify(tmp_path: Path, capsys):
    corpus = write_corpus(tmp_path / "corpus.json")
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"), "--quiet",
                 "--resamples", "100", "--ids", "e1,e2,e3,e4", *LENIENT]) == 0
    card = tmp_path / "run" / "card.json"
    assert verify(card, capsys)[0] == 0

    def take_one_out(data: dict) -> None:
        data["results"] = data["results"][1:]
        data["selection"]["entries_selected"] = data["metrics"]["segments"] = 3

    code, out = verify(edit_card(card, take_one_out), capsys)
    assert code == 1 and "corpus.json: 1 of its selected entries has no result" in out
    assert ("$.results: 1 of the 4 selected entries has no result (e.g. 'e1'): a run writes one for every entry it "
            "runs, a failed one too; yet the card says the run was complete ($.status)") in out
