"""The headline gate's thresholds met exactly, and missed by less than the percentages it shows tell."""

from __future__ import annotations

import json
from pathlib import Path

from mt_eval.cli import main
from rigor_support import family_corpus, honest, run


def test_a_rate_that_misses_its_threshold_by_less_than_the_percentages_show_says_both_exactly(tmp_path: Path, capsys):
    """Before, 2/30 against 0.0666 read "2/30 (6.7%) abstained", "at most 6.66%", and 2/3 canaries against 0.667
    "66.7% passed", "at least 66.7%": a failure the figures shown did not explain."""
    corpus = family_corpus(tmp_path / "corpus.json")
    code, card = run(tmp_path / "run", corpus, *honest(abstain=["n0", "n1", "s00", "s01"]))
    assert code == 0 and card is not None
    capsys.readouterr()
    policy = tmp_path / "hair.json"
    policy.write_text(json.dumps({"max_abstention_rate": 0.0666}))
    assert main(["gate", str(tmp_path / "run" / "card.json"), "--policy", str(policy)]) == 1
    out = capsys.readouterr().out
    assert "✗ the method abstained on 2/30 (6.7%) of the scored entries\n" \
           "      ✗ 2/30 is 0.06666666666666667, over the policy's max_abstention_rate 0.0666\n" in out
    policy.write_text(json.dumps({"max_abstention_rate": 0.06666666666666667}))  # exactly met: passes
    assert main(["gate", str(tmp_path / "run" / "card.json"), "--policy", str(policy)]) == 0
    capsys.readouterr()
    policy.write_text(json.dumps({"max_abstention_rate": 0.05}))  # a clear miss: the percentages say it
    assert main(["gate", str(tmp_path / "run" / "card.json"), "--policy", str(policy), "--json"]) == 1
    [report] = json.loads(capsys.readouterr().out)
    assert [c["details"] for c in report["checks"] if c["rule"] == "abstention"] == [
        ["the method abstained on 2/30 (6.7%) of the scored entries"]]
    code, card = run(tmp_path / "canary", corpus, *honest(canaries=1))  # translates the first canary only: 1/2
    assert card is not None and card.families is not None and str(card.families.canary_pass_rate) == "1/2 (50.0%)"
    capsys.readouterr()
    policy.write_text(json.dumps({"min_canary_pass_rate": 0.5000001}))
    assert main(["gate", str(tmp_path / "canary" / "card.json"), "--policy", str(policy)]) == 1
    out = capsys.readouterr().out
    assert "✗ canaries       1/2 (50.0%) passed" in out and "pass rate at least 50%\n" in out
    assert "      ✗ 1/2 is 0.5, under the policy's min_canary_pass_rate 0.5000001\n" in out
    policy.write_text(json.dumps({"min_canary_pass_rate": 0.5}))
    assert main(["gate", str(tmp_path / "canary" / "card.json"), "--policy", str(policy)]) == 0
