"""How a run ended: its status, the distinct failures, and the exit status of ``mt-eval run``.

=====  =========================================================================================
 0     complete: every entry was translated (or the failures are within ``--max-errors``), and the
       headline passed the gate (or, translation only, there is none to gate)
 1     the run could not start or continue: bad arguments or inputs, a method that cannot load or
       start; the message says what and how to fix it
 2     usage error (unknown option, missing ``--method``/``--corpus``)
 3     partial: some entries failed, more than ``--max-errors`` allows
 4     failed: no entry was translated; the card has no scores
 5     complete, but the gate withheld the headline (`mt_eval.harness.gate`; ``mt-eval gate CARD`` says
       why): the card keeps every figure. A partial or failed run keeps its own status, 3 or 4
 75    busy: another process is using the run directory (``--wait`` waits for it)
 130   interrupted (Ctrl-C); finished entries are saved, ``--resume`` continues
 143   stopped by SIGTERM (129: SIGHUP), as by Ctrl-C (`mt_eval.cli.termination`)
=====  =========================================================================================

A negative control's error is the refusal it asks for (`mt_eval.corpus.families`): it is not counted as a
failure here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TextIO

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.harness.runcard import Failure, RunCard, Status
from mt_eval.records import TranslationResult

EXIT_COMPLETE = 0
EXIT_ERROR = 1
EXIT_PARTIAL = 3
EXIT_FAILED = 4
EXIT_GATE_FAILED = 5
EXIT_BUSY = 75
EXIT_INTERRUPTED = 130

@dataclass(frozen=True)
class MaxErrors:
    """``--max-errors N`` (entries) or ``--max-errors P%`` (share of the entries run) tolerated for exit status 0."""

    count: int | None = None
    percent: float | None = None

    @classmethod
    def parse(cls, text: str) -> MaxErrors:
        """``"5"`` or ``"2.5%"``; raises `ValueError` with the fix (``must be …, got '…'``: argparse names the
        option before it)."""
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", text)
        if not found or (not found.group(2) and "." in found.group(1)):
            raise ValueError(f"must be a number of entries (5) or a share of the entries run (2.5%), got {text!r}")
        if found.group(2):
            percent = float(found.group(1))
            if percent > 100:
                raise ValueError(f"must be a share of at most 100% (all the entries run), got {text!r}")
            return cls(percent=percent)
        return cls(count=int(found.group(1)))

    def tolerates(self, errors: int, entries: int) -> bool:
        if self.percent is not None:  # in decimals: 18.4% of 375 entries is 69 (in binary, 18.4 * 375 < 6900)
            return entries > 0 and errors * 100 <= Fraction(repr(self.percent)) * entries
        return errors <= (self.count or 0)

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent is not None else str(self.count or 0)


def status_of(results: Collection[TranslationResult]) -> Status:
    errors = sum(r.error is not None for r in results)
    if errors == 0:
        return "complete"
    return "failed" if errors == len(results) else "partial"


def failures_of(results: Iterable[TranslationResult]) -> list[Failure]:
    """The distinct error messages, most frequent first, each with its count and its first entry."""
    return distinct_failures((result.id, result.error) for result in results if result.error is not None)


def distinct_failures(failed: Iterable[tuple[str, str]]) -> list[Failure]:
    """(id, error message) pairs as their distinct messages, most frequent first (the first seen first among
    equals), each with its count and its first id."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for failed_id, message in failed:
        counts[message] += 1
        first.setdefault(message, failed_id)
    order = {message: index for index, message in enumerate(first)}
    return [Failure(message=message, count=count, example_id=first[message])
            for message, count in sorted(counts.items(), key=lambda item: (-item[1], order[item[0]]))]


def exit_status(status: Status, errors: int, entries: int, max_errors: MaxErrors) -> int:
    if status == "failed":
        return EXIT_FAILED
    if status == "partial" and not max_errors.tolerates(errors, entries):
        return EXIT_PARTIAL
    return EXIT_COMPLETE


def print_failures(failures: list[Failure], errors: int, entries: int, stream: TextIO, *, shown: int = 10,
                   controls: int = 0) -> None:
    """``3 of 12 entries failed (2 distinct errors):`` and one line per message: count, message, example id;
    ``controls``: the negative controls left out of ``entries`` (a refusal of one is no failure)."""
    if not failures:
        return
    lines = [f"{failed_entries(failures, errors, entries, controls=controls)}:"]
    stream.write(escaped_for_terminal("\n".join(lines + failure_lines(failures, shown=shown))) + "\n")


def failed_entries(failures: list[Failure], errors: int, entries: int, *, controls: int = 0) -> str:
    """``3 of 12 entries failed (2 distinct errors, the 1 negative control aside)``, as a run counts them."""
    said = [distinct_count(failures)] if failures else []
    if controls:
        said.append(f"the {controls} negative control{'s' if controls != 1 else ''} aside")
    return f"{errors} of {entries} entries failed" + (f" ({', '.join(said)})" if said else "")


def card_failed_entries(card: RunCard) -> str:
    """`failed_entries` of a run card, counted as the run that wrote it did: its negative controls aside, their
    refusals no failures (a card without its family record: every entry)."""
    families = card.families
    controls = families.negative if families is not None else 0
    refused = sum(n.outcome == "refused" for n in families.negatives) if families is not None else 0
    return failed_entries(card.failures or [], card.errors - refused, len(card.results) - controls,
                          controls=controls)


def distinct_count(failures: list[Failure]) -> str:
    """``2 distinct errors``."""
    return f"{len(failures)} distinct error{'s' if len(failures) != 1 else ''}"


def failure_lines(failures: list[Failure], *, shown: int = 10, entries: str = "entries",
                  card: str = "the run card") -> list[str]:
    """One line per distinct message (the first ``shown``): its count, the message, an example id; then how many
    more there are, which ``card`` lists. A line break in a method's message or an id is written as ``\\n``, so
    that each message stays on its line."""
    if not failures:
        return []
    width = len(str(failures[0].count))
    lines = []
    for failure in failures[:shown]:
        message = failure.message if len(failure.message) <= 300 else failure.message[:297] + "..."
        lines.append(f"  {failure.count:>{width}} × {escaped_for_terminal(message, one_line=True)}  "
                     f"(e.g. {escaped_for_terminal(failure.example_id, one_line=True)})")
    if len(failures) > shown:
        rest = sum(f.count for f in failures[shown:])
        lines.append(f"  … and {len(failures) - shown} more distinct errors on {rest} {entries} ({card} lists "
                     "them all)")
    return lines


def print_failures_in_log(log_path: Path, entries: int, stream: TextIO) -> None:
    """`print_failures` for the failed results a run's log holds so far (a run cut short: Ctrl-C). The failed
    results alone are read, so a run stopped at a million entries reads its log in seconds, holding few."""
    from mt_eval.harness.results_log import read_results

    try:
        failed = list(read_results(log_path, keep=lambda result: result.error is not None).values())
    except (OSError, ValueError):
        return
    print_failures(failures_of(failed), len(failed), entries, stream)


def verdict(status: Status, code: int, errors: int, entries: int, max_errors: MaxErrors) -> str:
    """The last line of a run: its status and what the exit status means."""
    if status == "complete":
        return "status: complete"
    if status == "failed":
        return f"status: failed: none of the {entries} entries was translated; no scores (exit status {code})"
    within = "within" if max_errors.tolerates(errors, entries) else "over"  # (the code may be the gate's)
    return (f"status: partial: {errors} of {entries} entries failed, {within} --max-errors {max_errors} "
            f"(exit status {code})")
