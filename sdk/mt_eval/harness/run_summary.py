"""What ``mt-eval run`` prints at its end (`print_summary`): what ran and its scores, eligibility and latency
(`summary_lines`), the families and whether the headline passed the gate (`print_gate`), and last where the run
card and predictions are. This is the run's result: it goes to standard output, also under ``--quiet``; progress, logs,
warnings, the failures and the next commands (`next_steps`) go to standard error, so ``mt-eval run ... > result.txt``
keeps only the result."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from mt_eval.corpus.model import plural
from mt_eval.harness.fairness import describe_outcome
from mt_eval.harness.gate import unscored_reason
from mt_eval.harness.latency import latency_line
from mt_eval.harness.runcard import RunCard
from mt_eval.results import ResultNotes


def summary_lines(card: RunCard) -> list[str]:
    """The run's result in words, one line each: what ran, the scores, eligibility, latency."""
    entries = plural(card.corpus.entries, "entry", "entries")
    if card.selection is not None:
        entries = f"{card.selection.entries_selected:,} of {entries} (a selection)"
    lines = [f"{card.method.method_id} on {card.corpus.name} ({card.corpus.pair}): {entries}, "
             f"{plural(card.errors, 'error')}"]
    if card.status == "failed":
        lines.append("  no scores: no entry was translated")
    elif card.metrics is not None:
        parts = []
        for m in card.metrics.metrics:
            ci = f" [{m.ci_low:.2f}, {m.ci_high:.2f}]" if m.ci_low is not None and m.ci_high is not None else ""
            parts.append(f"{m.name} {m.score:.2f}{ci}")
        lines.append("  " + "   ".join(parts))
    else:
        lines.append(f"  not scored: {unscored_reason(card)}")
    lines += describe_outcome(card.eligibility, card.sandbox)
    said = card.gateway.budget_words() if card.gateway is not None else None
    if said is not None:  # (requests in flight when the budget was reached, or usage the upstream never said)
        lines.append(f"  gateway: {said}")
    if card.normalised:
        notes = ResultNotes()
        notes.merge(card.normalised)
        lines.append(f"  warning: results accepted after changes (the upstream harness's shape): {notes.summary()}")
    lines.append("  " + latency_line(card.latency, scored=card.families.scored if card.families else None))
    return lines


def print_summary(card: RunCard, out: Path, stream: TextIO, *, quiet: bool = False, policy: Path | None = None,
                  extensions: tuple[str, ...] = ()) -> None:
    """The whole result: `summary_lines`, `print_gate` (``policy``: the gate's policy file, None for the shipped
    one), then the run card's and the predictions' paths; their control and invisible characters (of a path, of
    the method's id) escaped, so that none acts on the terminal. Then `next_steps` (``extensions``: the run's)."""
    import io

    from mt_eval.control_chars import escaped_for_terminal

    result = io.StringIO()
    result.write("\n".join(summary_lines(card)) + "\n")
    print_gate(card, out / "card.json", result, quiet=quiet, policy=policy)
    result.write(f"  run card     {_shown(out / 'card.json')}\n"
                 f"  predictions  {_shown(out / 'predictions.txt')} (one line per entry, in corpus order)\n")
    stream.write(escaped_for_terminal(result.getvalue()))
    stream.flush()
    if not quiet and card.status == "complete" and card.metrics is not None:
        sys.stderr.write(escaped_for_terminal(next_steps(card, out / "card.json", policy, extensions)))


def next_steps(card: RunCard, card_path: Path, policy: Path | None = None, extensions: tuple[str, ...] = ()) -> str:
    """What a scored run's card is for next, as commands to paste: verify it, and (its headline passed the gate)
    publish it, with the run's extensions (their metrics are recomputed only with them) and, to publish, its gate
    policy (publish gates under the shipped one otherwise). Guidance, not the result: it goes to standard error,
    and ``--quiet`` leaves it out."""
    import shlex

    from mt_eval.scaffold import commands_here

    given, why = _streamed_corpus(card)
    mt_eval, shown = commands_here()[0], shlex.quote(_shown(card_path)) + given
    enabled = "".join(f" --extension {shlex.quote(module)}" for module in extensions)
    commands = {f"{mt_eval} verify {shown}{enabled}": "its hash, results and scores checked again"}
    if card.gate is None or card.gate.passed:  # (publish refuses a card whose headline failed the gate)
        gated = f" --policy {shlex.quote(str(policy))}" if policy is not None else ""
        commands[f"{mt_eval} publish {shown}{gated}{enabled}"] = ("onto the leaderboard (the `leaderboard` command "
                                                                  "shows it)")
    width = max(map(len, commands))
    lines = ["next:", *(f"  {command.ljust(width)}   # {what}" for command, what in commands.items())]
    if why:
        lines.append(f"  ({why})")
    return "\n".join(lines) + "\n"


def _streamed_corpus(card: RunCard) -> tuple[str, str]:
    """The corpus options a pasted command needs when the run read a corpus file from a stream (standard input, a
    pipe), which nothing names for it to read again — ``--corpus FILE``, or for parallel text ``--source-file`` and
    ``--reference-file``, a file the card names given as it names it — and what to give for them; ("", "") when
    the card names its files."""
    import shlex

    from mt_eval.corpus.files import stream_name

    files = card.corpus.reading.files if card.corpus.reading is not None else []
    given = {facts.role: facts.path for facts in files} or {"corpus": card.corpus.path}
    streams = {role: name for role, path in given.items() if (name := stream_name(Path(path))) is not None}
    if not streams:
        return "", ""
    options, asked = [], []
    for role, option, placeholder in (("corpus", "--corpus", "FILE"), ("source", "--source-file", "SRC"),
                                      ("reference", "--reference-file", "REF")):
        if role in streams:
            options.append(f" {option} {placeholder}")
            asked.append(f"{placeholder}: the {role} file the run read from {streams[role]}")
        elif role in given:
            options.append(f" {option} {shlex.quote(_shown(Path(given[role])))}")
    return "".join(options), "; ".join(asked)


def _shown(path: Path) -> str:
    """A path as short as it is clear: relative to the working directory unless that climbs far."""
    relative = os.path.relpath(path)
    return str(path.resolve()) if relative.startswith(os.path.join(os.pardir, os.pardir)) else relative


def print_gate(card: RunCard, card_path: Path, stream: TextIO, *, quiet: bool = False, policy: Path | None = None
               ) -> None:
    """The families and whether the headline passed the gate (and, when not, why, and how to see more);
    ``quiet`` leaves out the families line, never the headline: it is the result."""
    from mt_eval.harness.gate import gate_command, headline

    families, gate = card.families, card.gate
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
    stream.write(f"  (the card keeps every figure, none of them a headline; {gate_command(card_path, policy)} shows "
                 "every rule)\n")
