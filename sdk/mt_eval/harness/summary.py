"""How ``mt-eval run`` ends on the terminal: the result — what ran, the scores, eligibility, latency, and where
the run card and the predictions are — goes to standard output, also under ``--quiet``; progress, logs,
warnings and the failures go to standard error, so ``mt-eval run ... > result.txt`` keeps only the result."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from mt_eval.durations import format_duration
from mt_eval.harness import runcard as rc
from mt_eval.harness.fairness import describe_outcome
from mt_eval.results import ResultNotes


def summary_lines(card: rc.RunCard, out: Path) -> list[str]:
    """The result of a run in words, one line each."""
    entries = f"{card.corpus.entries} entries"
    if card.selection is not None:
        entries = f"{card.selection.entries_selected} of {card.corpus.entries} entries (a selection)"
    lines = [f"{card.method.method_id} on {card.corpus.name} ({card.corpus.pair}): {entries}, "
             f"{card.errors} error{'s' if card.errors != 1 else ''}"]
    if card.status == "failed":
        lines.append("  no scores: no entry was translated")
    elif card.metrics is not None:
        parts = []
        for m in card.metrics.metrics:
            ci = f" [{m.ci_low:.2f}, {m.ci_high:.2f}]" if m.ci_low is not None and m.ci_high is not None else ""
            parts.append(f"{m.name} {m.score:.2f}{ci}")
        lines.append("  " + "   ".join(parts))
    elif card.corpus.reading is not None and not card.corpus.reading.references:
        lines.append("  not scored: the corpus has no references (translation only)")
    else:
        lines.append("  not scored: not every entry has a result")
    lines += describe_outcome(card.eligibility, card.sandbox)
    if card.normalised:
        notes = ResultNotes()
        notes.merge(card.normalised)
        lines.append(f"  warning: results accepted after changes (the upstream harness's shape): {notes.summary()}")
    latency = latency_line(card.latency)
    if latency:
        lines.append(f"  {latency}")
    lines.append(f"  run card     {_shown(out / 'card.json')}")
    lines.append(f"  predictions  {_shown(out / 'predictions.txt')} (one line per entry, in corpus order)")
    return lines


def latency_line(latency: rc.LatencyFacts) -> str:
    """``latency: cold 16.4 ms (first call, with loading); hot p50 20 µs, p95 45 µs per entry``, or ""."""
    if latency.cold_s is None:
        return ""
    line = f"latency: cold {format_duration(latency.cold_s)} (first call, with loading)"
    if latency.hot_p50_s is not None and latency.hot_p95_s is not None:
        line += (f"; hot p50 {format_duration(latency.hot_p50_s)}, p95 {format_duration(latency.hot_p95_s)} per "
                 f"entry ({latency.hot_entries} after {latency.warmup_entries} warm-up)")
    return line


def print_summary(card: rc.RunCard, out: Path, stream: TextIO) -> None:
    stream.write("\n".join(summary_lines(card, out)) + "\n")
    stream.flush()


def _shown(path: Path) -> str:
    """A path as short as it is clear: relative to the working directory unless that climbs far."""
    relative = os.path.relpath(path)
    return str(path.resolve()) if relative.startswith(os.path.join(os.pardir, os.pardir)) else relative
