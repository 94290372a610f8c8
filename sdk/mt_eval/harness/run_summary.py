"""What ``mt-eval run`` prints at its end: what ran and its scores, eligibility and latency
(`print_summary`), then the families and whether the headline passed the gate (`print_gate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from mt_eval.harness.fairness import describe_outcome
from mt_eval.harness.latency import latency_line
from mt_eval.harness.runcard import RunCard
from mt_eval.results import ResultNotes


def print_summary(card: RunCard, out: Path, stream: Any) -> None:
    """The run's last lines: what ran, the scores, eligibility, latency."""
    entries = f"{card.corpus.entries} entries"
    if card.selection is not None:
        entries = f"{card.selection.entries_selected} of {card.corpus.entries} entries (a selection)"
    head = (f"{card.method.method_id} on {card.corpus.name} ({card.corpus.pair}): {entries}, "
            f"{card.errors} error{'s' if card.errors != 1 else ''}")
    lines = [head]
    if card.status == "failed":
        lines.append("  no scores: no entry was translated")
    elif card.metrics is not None:
        parts = []
        for m in card.metrics.metrics:
            ci = f" [{m.ci_low:.2f}, {m.ci_high:.2f}]" if m.ci_low is not None and m.ci_high is not None else ""
            parts.append(f"{m.name} {m.score:.2f}{ci}")
        lines.append("  " + "   ".join(parts))
    elif card.corpus.reading is not None and not card.corpus.reading.references:
        lines.append(f"  not scored: the corpus has no references (translation only); the predictions are in "
                     f"{out / 'predictions.txt'}")
    else:
        lines.append("  not scored: not every entry has a result")
    lines += describe_outcome(card.eligibility, card.sandbox)
    if card.normalised:
        notes = ResultNotes()
        notes.merge(card.normalised)
        lines.append(f"  warning: results accepted after changes (the upstream harness's shape): {notes.summary()}")
    lines.append("  " + latency_line(card.latency))
    stream.write("\n".join(lines) + "\n")


def print_gate(card: RunCard, card_path: Path, stream: TextIO, *, quiet: bool = False) -> None:
    """The families and whether the headline passed the gate (and, when not, why, and how to see more);
    ``quiet``: only a gate that withheld the headline."""
    from mt_eval.harness.gate import headline

    families, gate = card.families, card.gate
    if quiet and (gate is None or gate.passed):
        return
    if families is not None and not quiet:
        stream.write(f"  families: {families.scored} scored, canaries {families.canary_pass_rate} passed, "
                     f"negative controls {families.negative_violation_rate} violated, "
                     f"abstained on {families.abstention_rate} of the scored\n")
    if gate is None:
        stream.write("  no headline: translation only (the gate judges runs that are scored)\n")
        return
    if gate.passed:
        stream.write(f"headline: {headline(card)} (gate passed, policy {gate.policy})\n")
        return
    stream.write(f"headline withheld: the gate failed (policy {gate.policy}):\n")
    for failure in gate.failures:
        stream.write(f"  ✗ {failure}\n")
    stream.write(f"  (the card keeps every figure, none of them a headline; mt-eval gate {card_path} shows every "
                 "rule)\n")
