"""`mt-eval verify` checks the ``predictions.txt`` beside a card: the file users submit or diff must be the one the
run wrote of the card's results."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mt_eval.cli import main
from verify_support import run_with_failures


def verified(card: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["verify", str(card), "--json"])
    return code, json.loads(capsys.readouterr().out)[0]


@pytest.mark.parametrize("embed", ["always", "never"])
@pytest.mark.parametrize(("change", "said"), [
    (lambda lines: [*lines[:4], "el gato edited\n", *lines[5:]], "line 5 is not the prediction of entry e4"),
    (lambda lines: lines[:1], "it ends after line 1, where the run has 8 entries"),
    (lambda lines: [*lines, "one more\n"], "it goes on after line 8, the last of the run's 8 entries")],
    ids=["edited", "cut-short", "longer"])
def test_a_card_whose_predictions_were_changed_does_not_verify(tmp_path: Path, capsys, embed: str,
                                                               change: Callable[[list[str]], list[str]], said: str):
    """Before: the card verified whatever its predictions.txt said. Its results listed in the card or referenced in
    results.jsonl; the first three entries failed (empty lines)."""
    card = run_with_failures(tmp_path, "--embed-results", embed)
    predictions = card.parent / "predictions.txt"
    lines = predictions.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[:3] == ["\n"] * 3 and len(lines) == 8
    code, report = verified(card, capsys)
    assert code == 0 and report["verified"], report
    assert {"name": "predictions", "passed": True,
            "detail": f"{predictions}, one line per entry (8), as the card's results make it"} in report["checks"]

    predictions.write_text("".join(change(lines)), encoding="utf-8")
    code, report = verified(card, capsys)
    assert code == 1 and not report["verified"]
    assert {"name": "predictions", "passed": False, "detail": f"{predictions}: {said}"} in report["checks"]
    [problem] = report["problems"]
    assert (problem["file"], problem["code"]) == (str(predictions), "predictions")
    assert problem["message"].startswith(said + ": it is not the file the run wrote of the card's results")
    assert f"delete {predictions}" in problem["hint"] and "--resume" in problem["hint"]
    assert all(check["passed"] for check in report["checks"] if check["name"] != "predictions")

    assert main(["verify", str(card)]) == 1
    out = capsys.readouterr().out
    assert f"✗ predictions    {predictions}: {said}" in out and f"error: {predictions}: {said}" in out


def test_a_card_without_predictions_beside_it_verifies_without_that_check(tmp_path: Path, capsys):
    """A card copied on its own, or a run stopped between writing its card and its predictions (which --resume
    writes): the card's figures are checked as before."""
    card = run_with_failures(tmp_path)
    (card.parent / "predictions.txt").unlink()
    code, report = verified(card, capsys)
    assert code == 0 and report["verified"]
    assert "predictions" not in [check["name"] for check in report["checks"]]
