"""`mt-eval compare` refuses two cards whose covariates differ, or that either card lacks, unless
``--allow-diff NAME`` names each difference: the gate's five, the run settings, and the method's ``--param``
values, said one parameter at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main
from rigor_support import edit_card, family_corpus, honest, run


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return family_corpus(tmp_path / "corpus.json")


def compare(a: Path, b: Path, *args: str) -> int:
    return main(["compare", str(a), str(b), "--bootstrap", "200", "--trials", "500", *args])


def test_covariates_that_differ_are_refused_unless_named(tmp_path: Path, corpus: Path, capsys):
    assert run(tmp_path / "a", corpus, *honest())[0] == 0
    assert run(tmp_path / "b", corpus, *honest(), "--batch-size", "4", "--timeout", "60")[0] == 0
    a, b = tmp_path / "a" / "card.json", tmp_path / "b" / "card.json"
    capsys.readouterr()
    assert compare(a, b) == 1
    err = capsys.readouterr().err
    assert "the cards' covariates differ or are missing, so their scores are not comparable:" in err
    assert "batch_size: A 8, B 4" in err and "timeout_s: A 120.0, B 60.0" in err
    assert "--allow-diff batch_size" in err
    assert compare(a, b, "--allow-diff", "batch_size") == 1
    assert "batch_size" not in capsys.readouterr().err.split("comparable:")[1].split("accept")[0]
    assert compare(a, b, "--allow-diff", "batch_size", "--allow-diff", "timeout_s") == 0
    out = capsys.readouterr().out
    assert "covariates that differ (allowed with --allow-diff): batch_size: A 8, B 4; timeout_s: A 120.0, B 60.0" in out
    assert compare(a, b, "--allow-diff", "gpu") == 2  # a usage error, before any card is read
    assert "--allow-diff gpu: not a covariate; give one of model, temperature" in capsys.readouterr().err
    def older(data: dict) -> None:  # as an mt-eval before covariate records wrote it
        for key in ("tool_permissions", "not_applicable"):
            data["covariates"].pop(key)
        data.pop("gate")

    assert compare(edit_card(a, older, name="older.json"), a) == 1
    err = capsys.readouterr().err
    assert "tool_permissions: A missing: not recorded (an older card: run the evaluation again), B none" in err
    assert "model: A missing: not recorded (an older card" in err


def test_params_that_differ_are_refused_parameter_by_parameter_unless_named(tmp_path: Path, corpus: Path, capsys):
    """Before, two runs of one method with different --param values (what it does) compared as the same settings."""
    longer = {**{f"Canary {i}.": f"Canario {i}." for i in range(2)}, "Sentence number 0.": "Frase número 0."}
    assert run(tmp_path / "a", corpus, *honest(mark_unknown=True))[0] == 0
    assert run(tmp_path / "b", corpus, *honest(mark_unknown=False, beam=4))[0] == 0
    assert run(tmp_path / "c", corpus, *honest(mark_unknown=1, translate=longer))[0] == 0
    a, b, c = (tmp_path / name / "card.json" for name in "abc")
    capsys.readouterr()
    assert compare(a, b) == 1
    err = capsys.readouterr().err
    assert "comparable:\n  params: A beam not given, B beam=4\n  params: A mark_unknown=true, B mark_unknown=false\n" \
           "accept a difference you mean to compare with --allow-diff NAME (e.g. --allow-diff params)" in err
    assert "abstain" not in err and "translate" not in err  # (the same in both: not said)
    assert compare(a, b, "--allow-diff", "params") == 0
    assert "covariates that differ (allowed with --allow-diff): params: A beam not given, B beam=4; params: A " \
           "mark_unknown=true, B mark_unknown=false" in capsys.readouterr().out
    assert compare(a, c) == 1  # a 1 is not a true to the method; a long value is shown by its beginning and digest
    err = capsys.readouterr().err
    assert "params: A mark_unknown=true, B mark_unknown=1" in err
    assert 'params: A translate={"Canary 0.": "Canario 0.", "Canary 1.": "Canario 1."}, B translate={"Canary 0.": ' \
           '"Canario 0.", "Canary 1.":… (95 characters, sha256 ' in err

    def older(data: dict) -> None:  # as an mt-eval before params were recorded wrote it
        data["covariates"].pop("params")

    assert compare(edit_card(a, older, name="older.json"), a) == 1
    err = capsys.readouterr().err
    assert "params: A missing: not recorded (an older card: run the evaluation again), B abstain=" in err
    assert compare(edit_card(a, older, name="older.json"), a, "--allow-diff", "params") == 0
    assert "allowed with --allow-diff): params: A missing: not recorded (an older card" in capsys.readouterr().out


def test_two_methods_confined_alike_share_their_environment(tmp_path: Path, corpus: Path):
    """The sandbox record names the method's own directory, the paths mounted for its files and how many names were
    locked in them: two methods in the same sandbox differ there, and their environments are still the same."""
    from mt_eval.harness.compare_checks import covariate_differences
    from mt_eval.harness.covariates import covariate_states

    _, card = run(tmp_path / "a", corpus, *honest())
    assert card is not None

    def sandbox(plugin: str, *, network: str = "none", locked: int = 269) -> dict:
        return {"sandbox": {"tool": "bubblewrap", "version": "0.8.0", "denied": [], "policy": {
            "network": network, "plugin": plugin, "read_only": ["/usr", plugin], "locked_names": locked,
            "namespaces": ["user", "network"], "capabilities": "none"}}}

    lexicon, rules = sandbox("/plugins/lexicon"), sandbox("/plugins/rules", locked=236)
    assert covariate_differences(card, lexicon, card, rules) == []
    states = covariate_states(card, lexicon)
    assert states["environment"].shown.startswith("sandbox bubblewrap 0.8.0 (network none)")
    online = sandbox("/plugins/rules", network="gateway")
    assert [d.name for d in covariate_differences(card, lexicon, card, online)] == ["environment"]
