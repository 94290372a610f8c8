"""What `mt-eval compare` reports of each metric: which run scores better, whichever way the metric goes (TER:
lower is better), with significance left to the p-values; and JSON rows of one shape, identical outputs or not."""

from __future__ import annotations

import json
from pathlib import Path

from mt_eval.cli import main
from rigor_support import family_corpus, honest, run

ROW_KEYS = {"metric", "a", "b", "delta", "delta_ci_low", "delta_ci_high", "p_bootstrap", "p_randomization",
            "bootstrap_resamples", "randomization_trials", "seed", "higher_is_better", "identical"}
METRICS = ("chrF++", "BLEU", "TER")


def compared(a: Path, b: Path, capsys, *args: str) -> str:
    """What `mt-eval compare A B` prints (it must compare them)."""
    assert main(["compare", str(a), str(b), "--bootstrap", "200", "--trials", "500", "--quiet", *args]) == 0
    return capsys.readouterr().out


def said_of_each_metric(out: str) -> dict[str, str]:
    """Each metric's line of the text report: what follows its p-values."""
    return {line.split()[0]: line.split("  ")[-1] for line in out.splitlines() if line.startswith(METRICS)}


def test_each_metric_says_which_run_is_better_whichever_way_its_scores_go(tmp_path: Path, capsys):
    """chrF++ and BLEU are better higher, TER lower: a run that matches the references raises the first two and
    lowers TER, and every row names it the better one, as A or as B (significance stays the p-values'). Before,
    only B − A was shown (-50 for a TER that B halves) and the JSON did not say which way is better."""
    corpus = family_corpus(tmp_path / "corpus.json")
    better = {**{f"Sentence number {i}.": f"Frase número {i}." for i in range(30)},
              "Canary 0.": "Canario 0.", "Canary 1.": "Canario 1."}
    assert run(tmp_path / "copy", corpus, *honest())[0] == 0
    assert run(tmp_path / "good", corpus, *honest(translate=better))[0] == 0
    copy, good = tmp_path / "copy" / "card.json", tmp_path / "good" / "card.json"
    capsys.readouterr()
    rows = json.loads(compared(copy, good, capsys, "--json", "--allow-diff", "params"))["rows"]  # (--param translate)
    assert [(set(row), row["metric"], row["higher_is_better"], row["delta"] > 0, row["identical"]) for row in rows] \
        == [(ROW_KEYS, "chrF++", True, True, False), (ROW_KEYS, "BLEU", True, True, False),
            (ROW_KEYS, "TER", False, False, False)]
    verdicts = {row["metric"]: "significant" if row["p_randomization"] < 0.05 else "not significant" for row in rows}
    for a, b, winner in ((copy, good, "B"), (good, copy, "A")):
        assert said_of_each_metric(compared(a, b, capsys, "--allow-diff", "params")) == {
            "chrF++": f"{winner} better (higher is better), {verdicts['chrF++']} at 0.05",
            "BLEU": f"{winner} better (higher is better), {verdicts['BLEU']} at 0.05",
            "TER": f"{winner} better (lower is better), {verdicts['TER']} at 0.05"}


def test_identical_outputs_have_rows_of_the_same_keys_and_no_difference(tmp_path: Path, capsys):
    """Before, only rows of identical outputs had an `identical` key (true), so a row's shape told what its value
    would have: every row has it now, and `higher_is_better`."""
    corpus = family_corpus(tmp_path / "corpus.json")
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest())[0] == 0
    a, b = tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"
    capsys.readouterr()
    rows = json.loads(compared(a, b, capsys, "--json"))["rows"]
    assert [(set(row), row["metric"], row["higher_is_better"], row["delta"], row["identical"]) for row in rows] == [
        (ROW_KEYS, "chrF++", True, 0, True), (ROW_KEYS, "BLEU", True, 0, True), (ROW_KEYS, "TER", False, 0, True)]
    assert said_of_each_metric(compared(a, b, capsys)) == dict.fromkeys(METRICS,
                                                                        "no difference, not significant at 0.05")
