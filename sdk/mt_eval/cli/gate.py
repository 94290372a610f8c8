"""``mt-eval gate CARD… [--policy FILE]``: does a run card's headline pass the gate? Fail-closed.

Each card is re-verified first (`mt_eval.harness.verify`); then every rule of `mt_eval.harness.gate` is
applied under the policy (`mt_eval.harness.policy`), whose thresholds are echoed. Exit status 0 when every
card passes; 1 when any fails, does not verify or cannot be read — a card that cannot be judged has no
headline; 2 when the policy file cannot be used.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mt_eval.cli.usage_errors import named_path

DESCRIPTION = """\
Apply the headline gate to run cards. A card has a headline only when it re-verifies, its canaries pass,
its negative controls hold, its scored denominator reaches the minimum, its covariates are recorded and
the contamination check did not find the evaluation data in the method's bundle; otherwise there is no
headline and the exit status is 1. Thresholds come from --policy FILE over the
shipped defaults, and are printed with the verdict."""
EPILOG = """\
examples (after nox -s demo, or mt-eval run --demo --out runs/demo):
  mt-eval gate runs/demo/card.json
  mt-eval gate runs/*/card.json --policy examples/policies/no-abstention.json
  mt-eval gate runs/demo/card.json --json

A policy file names only what it changes, e.g. {"min_scored": 200, "max_abstention_rate": 0.05};
its fields: name, description, min_canaries, min_canary_pass_rate, min_negatives,
max_negative_violation_rate, min_scored, max_abstention_rate (null: no limit), required_covariates (model,
temperature, tool_permissions, environment, retry_budget), contamination (not-contaminated, verified-clean
or off). Rates are fractions (0.95 means 95%).

exit status: 0 every card passes, 1 a card fails the gate (or does not verify, or cannot be read), 2 the
policy cannot be read or is not valid, or a usage error"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mt_eval.harness.policy import describe, shipped_policy

    parser.description = DESCRIPTION
    parser.epilog = EPILOG + "\n\nthe shipped default policy:\n  " + "\n  ".join(describe(shipped_policy()))
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    from mt_eval.cli.arguments import add_corpus_arguments, card_argument

    parser.add_argument("cards", nargs="+", type=card_argument, metavar="CARD",
                        help="run card(s) (card.json, or the run directory holding it)")
    parser.add_argument("--policy", metavar="FILE", help="gate policy (default: the shipped one, shown below)",
                        type=named_path)
    add_corpus_arguments(parser, selection=False, title="the corpus the cards are re-verified against (default: the "
                                                        "files each card records)")
    parser.add_argument("--extension", action="append", default=[], metavar="MODULE",
                        help="enable an extension whose metrics the cards carry, to verify them (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")


def run(args: argparse.Namespace) -> int:
    from mt_eval.cli.arguments import corpus_instead
    from mt_eval.errors import UsageError
    from mt_eval.harness.policy import PolicyError, load_policy

    try:
        resolved = load_policy(args.policy)
        corpus = corpus_instead(args)
    except (PolicyError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    from mt_eval.harness.verify_corpus import CorpusCache

    corpora = CorpusCache()  # (each corpus read once for every card: --corpus - can be read only once)
    verdicts = [judge(Path(card), resolved, corpus=corpus, extensions=args.extension, corpora=corpora)
                for card in args.cards]
    if args.json:
        from mt_eval.cli.json_output import json_text

        sys.stdout.write(json_text(verdicts))  # (a card's name that is not UTF-8 written with its escapes)
    else:
        from mt_eval.control_chars import escaped_for_terminal
        from mt_eval.harness.policy import describe

        # (the policy's and the cards' paths, and values read from them: their control characters shown escaped)
        print(escaped_for_terminal(f"policy {resolved.policy.name} ({resolved.source}):"))
        print(escaped_for_terminal("\n".join(f"  {line}" for line in describe(resolved))))
        for verdict in verdicts:
            print(escaped_for_terminal(render(verdict)))
    return 0 if all(v["passed"] for v in verdicts) else 1


def judge(path: Path, resolved: Any, *, corpus: Any = None, extensions: list[str] | tuple[str, ...] = (),
          corpora: Any = None) -> dict[str, Any]:
    """The verdict on one card as a JSON-ready dict: ``passed``, the gate, the headline (or None), problems."""
    import msgspec

    from mt_eval.harness.gate import apply_gate, headline
    from mt_eval.harness.runcard import GateCheck
    from mt_eval.harness.verify import verify_card

    verification = verify_card(path, corpus=corpus, extensions=extensions, corpora=corpora)
    card = verification.card
    if card is None:
        problems = [p.render() for p in verification.errors] or ["it is not a run card"]
        check = GateCheck(rule="verified", passed=False, figure="cannot be read as a run card",
                          threshold="the card re-verifies", details=problems)
        return {"card": str(path), "passed": False, "policy": resolved.policy.name, "policy_sha256": resolved.sha256,
                "headline": None, "checks": [msgspec.to_builtins(check)], "failures": [f"verified: {problems[0]}"],
                "recorded": None}  # (the keys of every verdict: a reader of --json finds each)
    gate = apply_gate(card, resolved, data=verification.data, verification=verification)
    recorded = None if card.gate is None else {"passed": card.gate.passed, "policy": card.gate.policy}
    return {"card": str(path), "passed": gate.passed, "policy": gate.policy, "policy_sha256": gate.policy_sha256,
            "headline": headline(card) if gate.passed else None, "checks": msgspec.to_builtins(gate.checks),
            "failures": gate.failures, "recorded": recorded}


def render(verdict: dict[str, Any]) -> str:
    """A verdict as the lines ``mt-eval gate`` prints, as read from the card (the caller escapes them)."""
    marks = {True: "✓", False: "✗"}
    word = "passed" if verdict["passed"] else "FAILED"
    lines = [f"{verdict['card']}: headline gate {word}"]
    width = max((len(c["rule"]) for c in verdict["checks"]), default=0)
    figures = max((len(c["figure"]) for c in verdict["checks"]), default=0)
    for check in verdict["checks"]:
        lines.append(f"  {marks[check['passed']]} {check['rule']:<{width}}  {check['figure']:<{figures}}  policy: "
                     f"{check['threshold']}")
        for detail in check["details"][:10]:  # (a problem's fix on lines of its own, under it)
            first, *fix = detail.splitlines() or [""]
            lines += [f"      ✗ {first}", *(f"        {more.strip()}" for more in fix)]
        if len(check["details"]) > 10:
            lines.append(f"      … and {len(check['details']) - 10} more")
        lines += [f"      {note}" for note in check.get("notes", [])]
    if verdict["passed"]:
        lines.append(f"  headline: {verdict['headline']}")
    else:
        count = len(verdict["failures"])
        lines.append(f"  no headline: {count} rule{'s' if count != 1 else ''} failed")
    recorded = verdict.get("recorded")
    if recorded is not None and recorded["passed"] != verdict["passed"]:
        lines.append(f"  (the run's own gate, under policy {recorded['policy']}, "
                     f"{'passed' if recorded['passed'] else 'failed'})")
    return "\n".join(lines)
