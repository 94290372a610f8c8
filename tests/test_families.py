"""Corpus families: scored entries make the metrics, canaries pass their own rule, negative controls must be
refused or abstained on, and every figure of the card's family record is a count over its denominator."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.corpus import read_corpus
from mt_eval.corpus.families import PassRule, check_families
from mt_eval.corpus.model import CorpusError
from mt_eval.records import TranslationResult, result_problem
from rigor_support import family_corpus, params, run


def test_each_family_is_counted_and_each_rate_has_its_denominator(tmp_path: Path):
    corpus = family_corpus(tmp_path / "corpus.json", negatives=3, extra=[
        {"id": "c-chrf", "family": "canary", "pass_rule": "chrf>=90", "source": "Bonjour le monde.",
         "reference": "Hola, mundo."}])
    code, card = run(tmp_path / "run", corpus, *LENIENT,
                     *params(abstain=["n0", "s03"], fail=["n1"], translate={"Canary 0.": "Canario 0."}))
    assert code == 0 and card is not None and card.families is not None
    families = card.families
    assert (families.scored, families.canary, families.negative) == (30, 3, 3)
    assert str(families.canary_pass_rate) == "1/3 (33.3%)"  # c0 passes; c1 differs; c-chrf is far off
    outcomes = {c.id: (c.passed, c.detail) for c in families.canaries}
    assert outcomes["c0"] == (True, "exact match")
    assert outcomes["c1"] == (False, "'Canary 1.' is not 'Canario 1.'")
    assert outcomes["c-chrf"][0] is False and outcomes["c-chrf"][1].startswith("chrF++ ") and "< 90" in \
        outcomes["c-chrf"][1]
    assert [(n.id, n.outcome) for n in families.negatives] == [("n0", "abstained"), ("n1", "refused"),
                                                                ("n2", "violated")]
    assert (families.negative_violation_rate.numerator, families.negative_violation_rate.denominator) == (1, 3)
    assert str(families.abstention_rate) == "1/30 (3.3%)" and str(families.scored_errors) == "0/30 (0.0%)"
    # the metrics are over the scored entries only, and the one abstained on counts as empty
    assert card.metrics is not None and card.metrics.segments == 30
    _, answered = run(tmp_path / "answered", corpus, *LENIENT, *params(abstain=["n0"], fail=["n1"]))
    assert answered is not None and answered.metrics is not None
    assert card.metrics.metrics[0].score < answered.metrics.metrics[0].score


def test_the_method_never_sees_the_family_fields_and_a_pair_negative_gets_its_pair(tmp_path: Path):
    record, pairs = tmp_path / "calls.jsonl", tmp_path / "pairs.jsonl"
    corpus = family_corpus(tmp_path / "corpus.json", scored=3, extra=[
        {"id": "de", "family": "negative", "pair": "eng>deu", "source": "Good morning."}])
    code, card = run(tmp_path / "run", corpus, *LENIENT, "--latency-sample", "0",
                     *params(record=str(record), record_pairs=str(pairs), abstain=["n0", "n1", "de"]))
    assert code == 0 and card is not None
    seen = [entry for line in record.read_text().splitlines() for entry in json.loads(line)]
    assert len(seen) == 8 and all(set(entry) <= {"id", "source"} for entry in seen)
    calls = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert ["eng", "deu", ["de"]] in calls
    assert all(call[:2] == ["eng", "spa"] for call in calls if "de" not in call[2])
    assert card.families is not None and [n.outcome for n in card.families.negatives] == ["abstained"] * 3


def test_malformed_families_are_refused_every_problem_named_with_its_place(tmp_path: Path, capsys):
    bad = [{"id": "a", "source": "x", "reference": "y", "family": "canry"},
           {"id": "b", "source": "x", "reference": "y", "family": "canary"},
           {"id": "c", "source": "x", "reference": "y", "family": "canary", "pass_rule": "bleu>=30"},
           {"id": "d", "source": "x", "family": "canary", "pass_rule": "exact"},
           {"id": "e", "source": "x", "reference": "y", "pass_rule": "exact"},
           {"id": "f", "source": "x", "reference": "y", "pair": "eng>deu"},
           {"id": "g", "source": "x", "family": "negative", "pair": "English to German"},
           {"id": "h", "source": "x", "reference": " ", "family": "canary", "pass_rule": "exact"}]
    corpus = tmp_path / "bad.json"
    corpus.write_text(json.dumps(bad))
    with pytest.raises(CorpusError) as raised:
        read_corpus(corpus)
    found = [(p.path, p.message) for p in raised.value.problems]
    assert found == [
        ("$[0].family", "unknown family 'canry'"),
        ("$[1].pass_rule", "a canary needs its own pass rule"),
        ("$[2].pass_rule", "unknown pass rule 'bleu>=30'"),
        ("$[3].reference", "a canary needs a reference its pass rule compares with"),
        ("$[4].pass_rule", "only a canary has a pass rule (this entry is scored)"),
        ("$[5].pair", "only a negative control names its own pair (this entry is scored)"),
        ("$[6].pair", "'English to German' is not a language pair"),
        ("$[7].reference", "a canary needs a reference its pass rule compares with (a blank one is none)")]
    assert main(["run", "--method", str(Path(__file__).parent / "fixtures" / "methods"), "--corpus", str(corpus),
                 "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{corpus} $[0].family: unknown family 'canry'" in err and "fix: a family is scored" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_negative_control_may_have_an_empty_source_and_no_reference(tmp_path: Path):
    corpus = read_corpus(family_corpus(tmp_path / "c.json", scored=2, canaries=1, negatives=1))
    assert corpus.references  # every scored entry (and the canary) has one; the negative control needs none
    blank_scored = tmp_path / "blank.json"
    blank_scored.write_text(json.dumps([{"id": "1", "source": "", "reference": "x"}]))
    with pytest.raises(CorpusError, match="missing source text"):
        read_corpus(blank_scored)
    some = tmp_path / "some.json"
    some.write_text(json.dumps([{"id": "1", "source": "a", "reference": "x"}, {"id": "2", "source": "b"},
                                {"id": "3", "source": "c", "family": "negative"}]))
    with pytest.raises(CorpusError, match="1 entry of 2 scored has no reference"):
        read_corpus(some)


def test_pass_rules():
    assert PassRule("exact").judge(" Hola. ", "Hola.") == (True, "exact match")
    assert PassRule("exact").judge("Hola", "Hola.") == (False, "'Hola' is not 'Hola.'")
    assert PassRule("chrF++ >= 50").judge("La casa es grande.", "La casa es grande.") == (True, "chrF++ 100.0 >= 50")
    passed, detail = PassRule("chrf>=60").judge("El casa.", "La casa es grande.")
    assert not passed and detail.startswith("chrF++ ") and detail.endswith("< 60")
    for text in ("chrf>=101", "bleu>=3", "", "chrf=>50"):
        with pytest.raises(ValueError, match="unknown pass rule"):
            PassRule(text)
    assert check_families([{"id": "x", "family": "canary", "pass_rule": "chrf>=100", "reference": "r"}],
                          file="f") == []


def test_an_abstained_result_needs_its_reason_and_nothing_else():
    def problem(**fields: object) -> str | None:
        return result_problem(msgspec.convert({"id": "1", **fields}, TranslationResult))

    assert problem(abstained=True, abstain_reason="unsupported pair eng>deu") is None
    assert problem(abstained=True) == 'an abstained result needs "abstain_reason" saying why'
    assert problem(abstained=True, abstain_reason="x", predicted="y") == \
        'an abstained result has neither "predicted" nor "error"'
    assert problem(abstain_reason="x", predicted="y") == '"abstain_reason" is given but "abstained" is not true'
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"id": "1", "abstained": True, "abstain_reason": ""}, TranslationResult)


def test_an_abstention_reaches_the_card_through_the_bridge_from_node(tmp_path: Path):
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    plugin = tmp_path / "abstainer"
    plugin.mkdir()
    (plugin / "translate.js").write_text(
        "export async function translate(entries) {\n"
        "  return entries.map((e) => e.source ? { id: e.id, predicted: e.source.replace('Canary', 'Canario') }\n"
        "    : { id: e.id, abstained: true, abstain_reason: 'empty source' });\n}\n")
    (plugin / "method.json").write_text(json.dumps({"name": "Abstainer", "node_entry": "translate.js",
                                                    "dependency_class": "S", "dependencies": []}))
    code, card = run(tmp_path / "run", family_corpus(tmp_path / "c.json"), method=plugin)
    assert code == 0 and card is not None and card.gate is not None and card.gate.passed
    abstained = [r for r in card.results if r.abstained]
    assert [(str(r.id), r.abstain_reason, r.predicted, r.error) for r in abstained] == [
        ("n0", "empty source", None, None), ("n1", "empty source", None, None)]
    assert card.errors == 0


def test_the_demo_corpus_runs_every_family_and_passes_the_default_gate(tmp_path: Path, capsys):
    assert main(["run", "--demo", "--out", str(tmp_path / "demo"), "--resamples", "100"]) == 0
    out, err = capsys.readouterr()
    assert "36 entries; 30 scored, 3 canaries, 3 negative controls" in err
    assert "families: 30 scored, canaries 3/3 (100.0%) passed, negative controls 0/3 (0.0%) violated" in out
    assert "headline: chrF++ 69.09" in out and "(gate passed, policy default)" in out
    card = json.loads((tmp_path / "demo" / "card.json").read_text())
    negatives = {n["id"]: n["detail"] for n in card["families"]["negatives"]}
    assert negatives["negative-03"] == "unsupported pair eng>deu: the glossary is eng>spa"
    assert negatives["negative-01"].startswith("no word in the source")


def test_a_selection_of_canaries_and_negatives_only_says_so_not_that_results_are_missing(tmp_path: Path, capsys):
    """Nothing to score and nothing to time: the reason is the selection, not --latency-sample 0 or lost results."""
    code = main(["run", "--demo", "--ids", "canary-01..negative-03", "--out", str(tmp_path / "controls")])
    out, err = capsys.readouterr()
    assert code == 5  # the run completed; the gate withholds a headline
    reason = "the run has no scored entry: the entries it ran are canaries and negative controls only"
    assert f"not scored: {reason}" in out and f"✗ scored: the card has no metrics: {reason}" in out
    assert "latency: not measured (the run has no scored entry: the latency calls are made with scored entries " \
           "only)" in out
    assert "not every entry has a result" not in out and "--latency-sample 0" not in out + err
    assert "families: 0 scored, canaries 3/3 (100.0%) passed" in out
    assert "6 of 36 entries selected; 0 scored, 3 canaries, 3 negative controls" in err  # the selection's families


def test_a_corpus_of_canaries_and_negatives_only_is_gated_not_read_as_translation_only(tmp_path: Path, capsys):
    """Its canaries have references: failing canaries and translated negative controls withhold the run (exit 5),
    as for a selection of them, rather than passing unjudged as a corpus without references."""
    corpus = family_corpus(tmp_path / "controls.json", scored=0)
    code, card = run(tmp_path / "run", corpus)  # the scripted method fails the canaries, translates the negatives
    out, err = capsys.readouterr()
    assert code == 5
    assert "no references" not in out + err and "translation only" not in out + err
    assert card is not None and card.gate is not None and not card.gate.passed
    assert [failure.split(":")[0] for failure in card.gate.failures] == ["canaries", "negatives", "scored"]
    assert "the corpus has none: add entries without a family" in card.gate.failures[2]
    assert main(["verify", str(tmp_path / "run")]) == 0


def test_a_tsv_corpus_without_families_is_told_to_add_columns_not_json_fields(tmp_path: Path, capsys):
    """Before: run and gate told a TSV corpus to mark entries with ``"family": "canary"``, JSON a TSV has no place
    for (its families are columns: README, *Corpus families*)."""
    corpus = tmp_path / "dev.tsv"
    corpus.write_text("".join(f"Sentence {i} is here.\tFrase {i} está aquí.\n" for i in range(3)), encoding="utf-8")
    code, _ = run(tmp_path / "run", corpus, "--pair", "eng>spa", "--latency-sample", "0")
    warned = capsys.readouterr().err
    assert code == 5 and ('mark entries with a family column (named in a header line) holding canary and a pass_rule '
                          'column ("exact" or "chrf>=N")') in warned, warned
    assert '"family"' not in warned
    assert f"warning: corpus {corpus} (no family column): 0 canary entries" in warned  # (not "$.entries[*].family")
    assert main(["gate", str(tmp_path / "run")]) == 1
    said = capsys.readouterr().out
    assert f"mark them in {corpus} with a family column (named in a header line) holding negative (input" in said
    assert '"family"' not in said
