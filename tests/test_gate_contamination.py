"""The headline gate judges the contamination check of the method's bundle: by default a bundle found to hold the
corpus's text gets no headline and is not published; a policy can ask for a verified-clean check, or judge nothing.
Before, a CONTAMINATED run still printed "gate passed" with its headline, exit status 0."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.harness.gate import apply_gate
from mt_eval.harness.policy import GatePolicy, ResolvedPolicy, load_policy, shipped_policy, thresholds
from mt_eval.harness.runcard import RunCard
from mt_eval.leaderboard.synthetic import CardFactory, write_card, write_corpus

RECORDS = {
    "clean": {"status": "clean", "recall": 1.0, "recall_floor": 0.9},
    "contaminated": {"status": "contaminated", "reasons": ["3 hits on 2 corpus entries"], "hits_total": 3,
                     "hits": [{"file": "glossary.tsv", "line": line, "corpus": "corpus.json", "entry_id": entry,
                               "side": side, "kind": "exact", "coverage": 1.0, "longest_run": 6, "entry_words": 6,
                               "matched": "the words of the entry found there"}
                              for line, entry, side in [(1, "e1", "source"), (2, "e1", "reference"),
                                                        (3, "e2", "source")]]},
    "not-run": {"status": "not-run", "reasons": ["skipped with --no-contamination-check"]},
    "unverified": {"status": "unverified", "reasons": ["the planted control's recall 0.50 is below its floor"],
                   "recall": 0.5, "recall_floor": 0.9},
    "missing": None,
}


@pytest.fixture(scope="module")
def factory(tmp_path_factory) -> CardFactory:
    return CardFactory(write_corpus(tmp_path_factory.mktemp("corpus") / "corpus.json", name="synthetic"),
                       resamples=50)


def card_with(factory: CardFactory, record: str) -> RunCard:
    data = factory.card("m")
    data["contamination"] = RECORDS[record]
    return msgspec.convert(data, RunCard)


def policy(contamination: str | None) -> ResolvedPolicy:
    shipped = msgspec.to_builtins(shipped_policy().policy)
    return ResolvedPolicy(msgspec.convert({**shipped, "contamination": contamination}, GatePolicy), "test")


@pytest.mark.parametrize(("judged", "passes"), [
    ("not-contaminated", {"clean": True, "contaminated": False, "not-run": True, "unverified": True,
                          "missing": False}),
    ("verified-clean", {"clean": True, "contaminated": False, "not-run": False, "unverified": False,
                        "missing": False}),
    ("off", dict.fromkeys(RECORDS, True)),
])
def test_each_contamination_policy_passes_what_it_promises(factory: CardFactory, judged: str, passes: dict):
    for record, expected in passes.items():
        verdict = apply_gate(card_with(factory, record), policy(judged))
        assert verdict.passed is expected, (judged, record, verdict.failures)
        if not expected:
            assert [f.split(":")[0] for f in verdict.failures] == ["contamination"]


def test_the_shipped_policy_withholds_the_headline_of_a_contaminated_bundle(factory: CardFactory):
    assert shipped_policy().policy.contamination == "not-contaminated"
    verdict = apply_gate(card_with(factory, "contaminated"), shipped_policy())
    [check] = [c for c in verdict.checks if c.rule == "contamination"]
    assert (check.passed, check.figure) == (False, "contaminated, 3 hits")
    assert check.details[0] == "the bundle contains evaluation data (3 hits on 2 corpus entries)"
    assert check.details[1].startswith("the method's bundle holds text of the corpus: remove it (mt-eval "
                                       "contamination --method DIR --corpus ")


def test_a_card_written_before_the_rule_keeps_its_policy_hash_and_verifies(factory: CardFactory):
    """Its recorded thresholds have no contamination field: re-applied, they hash as they did, judge nothing."""
    before = policy(None)
    assert "contamination" not in thresholds(before.policy)
    data = factory.card("old")
    card = msgspec.convert(data, RunCard)
    verdict = apply_gate(card, before)
    assert "contamination" not in [c.rule for c in verdict.checks] and verdict.passed


def test_a_policy_file_can_ask_for_verified_clean_and_a_bad_value_is_named(tmp_path: Path):
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({"contamination": "verified-clean"}))
    assert load_policy(strict).policy.contamination == "verified-clean"
    strict.write_text(json.dumps({"contamination": "strict"}))
    with pytest.raises(Exception, match="contamination"):
        load_policy(strict)


def test_a_contaminated_card_is_not_published_and_gate_says_why(factory: CardFactory, tmp_path: Path, capsys):
    ran = msgspec.to_builtins(factory.clean_check(factory.corpus.entries))  # (what a check that ran records)
    leaky = {**RECORDS["contaminated"], "corpora": ran["corpora"], "settings": ran["settings"],
             "recall_floor": ran["recall_floor"]}
    data = factory.card("leaky", extra={"contamination": leaky})
    from mt_eval.harness.verify import canonical_sha256

    data["gate"] = msgspec.to_builtins(apply_gate(msgspec.convert(data, RunCard), shipped_policy()))
    data["content_sha256"] = canonical_sha256(data)
    card = write_card(data, tmp_path / "run" / "card.json")
    assert main(["gate", str(card)]) == 1
    out = capsys.readouterr().out
    assert "✗ contamination  contaminated, 3 hits" in out and "no headline: 1 rule failed" in out
    assert main(["publish", str(card), "--db", str(tmp_path / "board.db"), "--no-input"]) == 1
    assert "contamination: the bundle contains evaluation data (3 hits on 2 corpus entries)" in capsys.readouterr().err
