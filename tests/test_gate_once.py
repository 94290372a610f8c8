"""Publishing applies the headline gate's rules once a card when the board's policy has the thresholds the card
records, and judges the card afresh under any other thresholds."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from mt_eval.harness import gate
from mt_eval.harness.policy import ResolvedPolicy, shipped_policy
from mt_eval.harness.verify import verify_card
from mt_eval.leaderboard.publish import PublishError, complete
from rigor_support import family_corpus, honest, run


@pytest.fixture
def good(tmp_path: Path) -> Path:
    code, card = run(tmp_path / "good", family_corpus(tmp_path / "corpus.json"), *honest())
    assert code == 0 and card is not None and card.gate is not None and card.gate.passed
    (tmp_path / "good" / "method_card.json").write_text(
        '{"description": "A scripted method", "paradigm": "rule-based", "open_source": true}')
    return tmp_path / "good" / "card.json"


@pytest.fixture
def rule_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The policies (by name) the covariates rule was applied under, in order."""
    calls: list[str] = []
    original = gate._covariates

    def counted(card, data, policy):  # type: ignore[no-untyped-def]
        calls.append(policy.name)
        return original(card, data, policy)

    monkeypatch.setattr(gate, "_covariates", counted)
    return calls


def test_the_rules_run_once_when_the_board_policy_has_the_cards_thresholds(good: Path, rule_calls: list[str]):
    verification = verify_card(good)
    assert verification.ok and len(rule_calls) == 1  # the card's recorded verdict, re-applied
    prepared = complete(good, verification, no_input=True, policy=shipped_policy())
    assert len(rule_calls) == 1  # the same thresholds: the same checks, not made again
    verdict = gate.apply_gate(verification.card, shipped_policy(), data=verification.data, verification=verification)
    assert [c.rule for c in verdict.checks] == ["verified", "canaries", "negatives", "scored", "abstention",
                                                "covariates", "contamination"]
    assert verdict.passed and prepared.record["run_id"] == verification.card.run_id
    alone = gate.apply_gate(verification.card, shipped_policy(), data=verification.data)  # no memo: computed
    assert len(rule_calls) == 2 and msgspec.to_builtins(alone.checks) == msgspec.to_builtins(verdict.checks[1:])


def test_a_board_policy_of_other_thresholds_judges_the_card_afresh(good: Path, rule_calls: list[str]):
    verification = verify_card(good)
    stricter = shipped_policy().policy
    board = ResolvedPolicy(msgspec.structs.replace(stricter, name="strict", min_scored=10_000), "strict.json")
    with pytest.raises(PublishError, match=r"policy strict.*\n  scored: \d+ scored entries: a headline needs at "
                                           r"least 10000"):
        complete(good, verification, no_input=True, policy=board)
    assert rule_calls == [verification.card.gate.policy, "strict"]
