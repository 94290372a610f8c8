"""Re-verifying a card's measurement records against its own results and its corpus file (`mt-eval verify`).

- **families**: the family record recomputed from the corpus file's families and pass rules and the card's
  results (canaries judged again, negative controls classified again, every ratio counted again);
- **latency**: the hot figures recomputed from the timed calls the card lists, the sample being the first
  scored entries of the run, cold being load plus first call, the counts being the calls a run makes (the sample
  ``repetitions`` times, each timed or failed, unless ``stopped`` names the call that timed out), and the
  self-reported figures recomputed from the results' own ``latency_s``;
- **gate**: the recorded verdict re-applied with the thresholds it records (`mt_eval.harness.gate.recheck`);
- **contamination, static scan and eligibility**: `mt_eval.harness.verify_fairness`;
- **predictions**: the ``predictions.txt`` beside the card, when it is there, must be the file the run writes of the
  card's results (`mt_eval.harness.corpus.predictions_problem`, as a ``--resume`` of the complete run checks it),
  read a line at a time against them.

A card without one of these records (an older card) gets no line for it: `mt-eval gate` is where a missing
record fails.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from mt_eval.harness.families import tally
from mt_eval.harness.gate import recheck
from mt_eval.harness.verify_fairness import check_fairness
from mt_eval.problems import Problem

if TYPE_CHECKING:
    from mt_eval.harness.logged_results import LoggedResults
    from mt_eval.harness.runcard import RunCard
    from mt_eval.harness.verification import Verification
    from mt_eval.records import TranslationResult

TOLERANCE_S = 2e-6  # latencies are stored rounded to the microsecond


def run_entries(card: RunCard, source: Any) -> Sequence[dict[str, Any]]:
    """The corpus entries the run covered, in corpus order: its selection applied again, or the whole corpus
    (a run that stopped early counts its entries without a result too). Entries on disk stay there."""
    if card.selection is None:
        return source.entries  # type: ignore[no-any-return]
    from mt_eval.corpus.selection import request_from_facts, select

    return select(source, request_from_facts(msgspec.to_builtins(card.selection))).entries


def check_records(result: Verification, card: RunCard, source: Any) -> None:
    entries = run_entries(card, source)
    predictions = os.path.join(os.path.dirname(result.path), "predictions.txt")  # (beside its card; a copy may not)
    beside = os.path.isfile(predictions)  # (os.path: a few µs a card where pathlib took 35, in a bulk publish)
    results = _by_entry(result, card, entries) if card.families is not None or beside else None
    if card.families is not None:
        assert results is not None
        _families(result, card, entries, results)
    if card.latency.measured_by == "harness" and card.latency.hot_calls_s is not None:
        _latency(result, card, entries)
    elif card.latency.hot_calls_s is not None:  # (only the harness lists its timed calls: a run card's figures)
        result.problem("$.latency.measured_by", "the card says null, but it lists the harness's timed calls "
                       "($.latency.hot_calls_s): a run measures them, \"harness\"", "use the card the run wrote",
                       code="latency")
        result.check("latency", False, "measured_by disagrees")
    check_fairness(result, card, source.entries)
    if card.gate is not None and card.gate.thresholds is None:
        result.check("gate", None, "the recorded verdict has no thresholds to re-apply (mt-eval gate judges the card)")
    elif card.gate is not None and result.data is not None:
        wrong = recheck(card, result.data, result.gate_rules)
        for where, message in wrong:
            result.problem(where, message, "the verdict must follow from the card's own figures", code="gate")
        result.check("gate", not wrong, f"{'passed' if card.gate.passed else 'failed'} under policy "
                                        f"{card.gate.policy}, as its figures say" if not wrong else "disagrees")
    if beside:
        assert results is not None
        _predictions(result, Path(predictions), entries, results)


def _by_entry(result: Verification, card: RunCard, entries: Sequence[dict[str, Any]]
              ) -> Mapping[str, TranslationResult] | LoggedResults:
    """The card's results by entry id: read from the log a chunk at a time, as the run read them, for a card that
    references it; the card's own, held already, for one that lists them."""
    from mt_eval.harness.card_results import ResultsOnDisk
    from mt_eval.harness.logged_results import LoggedResults

    if isinstance(card.results, ResultsOnDisk):
        return LoggedResults(card.results.path, entries)
    keys = result.keys if len(result.keys) == len(card.results) else [str(r.id) for r in card.results]
    return dict(zip(keys, cast("list[TranslationResult]", card.results), strict=True))


def _predictions(result: Verification, path: Path, entries: Sequence[dict[str, Any]],
                 results: Mapping[str, TranslationResult] | LoggedResults) -> None:
    """The ``predictions.txt`` beside the card, read line by line against the one its results make (as a
    ``--resume`` of the complete run checks it): edited, cut short or run on, it is not the run's."""
    from mt_eval.harness.corpus import predictions_problem

    problem = predictions_problem(path, entries, results)
    if problem is not None:
        result.problems.append(Problem(
            file=str(path), path="$", code="predictions",
            message=f"{problem}: it is not the file the run wrote of the card's results (edited or cut short since)",
            hint=f"delete {path} and run the run's `mt-eval run` command again with --resume (in place of --force, "
                 "where it has it): it writes the file anew from the run's results, translating nothing"))
    result.check("predictions", problem is None, f"{path}: {problem}" if problem is not None else
                 f"{path}, one line per entry ({len(entries):,}), as the card's results make it")


def _families(result: Verification, card: RunCard, entries: Sequence[dict[str, Any]],
              results: Mapping[str, TranslationResult] | LoggedResults) -> None:
    recounted = tally(entries, results)
    wrong: list[str] = []
    if recounted != card.families:  # else (the common case) nothing to compare field by field
        stated, again = msgspec.to_builtins(card.families), msgspec.to_builtins(recounted)
        wrong = [key for key in again if stated.get(key) != again[key]]
        for key in wrong:
            result.problem(f"$.families.{key}", f"the card says {_short(stated.get(key))}, the corpus's families "
                                                f"and the card's results say {_short(again[key])}", code="families")
    families = card.families
    assert families is not None
    result.check("families", not wrong, f"{families.scored} scored, canaries {families.canary_pass_rate} passed, "
                                        f"negative controls {families.negative_violation_rate} violated"
                 if not wrong else ", ".join(wrong) + " disagree")


def _short(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def _latency(result: Verification, card: RunCard, entries: Sequence[dict[str, Any]]) -> None:
    import statistics

    from mt_eval.corpus.families import family_of
    from mt_eval.harness.latency import percentiles, self_reported

    latency = card.latency
    hot = latency.hot_calls_s or []
    p50, p95 = percentiles(hot)
    scored = (str(e["id"]) for e in entries if family_of(e) == "scored")  # the first few: read no further
    sample = list(islice(scored, len(latency.sample_ids or [])))
    expected: dict[str, tuple[Any, Any]] = {
        "hot_p50_s": (latency.hot_p50_s, p50), "hot_p95_s": (latency.hot_p95_s, p95),
        "hot_calls": (latency.hot_calls, len(hot)),
        "hot_mean_s": (latency.hot_mean_s, round(statistics.fmean(hot), 6) if hot else None),
        "hot_entries": (latency.hot_entries, len(latency.sample_ids or [])),
        "sample_ids": (latency.sample_ids, sample),
        "self_reported": (msgspec.to_builtins(latency.self_reported),
                          msgspec.to_builtins(self_reported(card.results))),
    }
    if latency.cold_s is not None and latency.load_s is not None and latency.first_call_s is not None:
        expected["cold_s"] = (latency.cold_s, round(latency.load_s + latency.first_call_s, 6))
    wrong = [key for key, (stated, actual) in expected.items() if not _same(stated, actual)]
    for key in wrong:
        stated, actual = expected[key]
        result.problem(f"$.latency.{key}", f"the card says {_short(stated)}, recomputed {_short(actual)}",
                       code="latency")
    for key, message in _calls_made(latency):
        wrong.append(key)
        result.problem(f"$.latency.{key}", message, "use the card the run wrote", code="latency")
    shown = "no hot calls" if p50 is None else f"hot p50 {p50 * 1000:.2f} ms over {len(hot)} timed calls"
    result.check("latency", not wrong, shown if not wrong else ", ".join(wrong) + " disagree")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= TOLERANCE_S
    return bool(a == b)


def _calls_made(latency: Any) -> list[tuple[str, str]]:
    """(field, message) for each latency count the calls a run makes contradict (`mt_eval.harness.latency.measure`):
    one cold call, the warm-up calls, then the sample ``repetitions`` times, each hot call timed or failed — all of
    them unless a call timed out (``stopped`` names it: call k of n); a first call that failed has no cold figure."""
    import re

    found = []
    timed, failed, reps = len(latency.hot_calls_s), latency.hot_failed, latency.repetitions
    entries, warmup = latency.hot_entries, latency.warmup_entries
    if failed is not None and reps is not None and entries:
        planned, made = entries * reps, timed + failed
        stopped = re.match(r"call (\d+) of (\d+) ", latency.stopped or "")
        if latency.stopped is None and made != planned:
            found.append(("hot_failed", f"the card says {failed} hot calls failed and {timed} were timed, but "
                                        f"{entries} entries × {reps} repetitions make {planned} hot calls "
                                        f"({planned - timed} failed), none stopped early ($.latency.stopped is null)"))
        elif latency.stopped is not None and stopped is None:
            found.append(("stopped", f"{_short(latency.stopped)} is not how a run says where its latency calls "
                                     "stopped (call K of N timed out …)"))
        elif stopped is not None:
            call, calls = int(stopped.group(1)), int(stopped.group(2))
            if calls != 1 + warmup + planned:
                found.append(("stopped", f"the card says call {call} of {calls}, but 1 cold, {warmup} warm-up and "
                                         f"{entries} × {reps} hot calls make {1 + warmup + planned}"))
            elif made != max(0, call - 1 - warmup):
                found.append(("hot_failed", f"the card says {failed} hot calls failed and {timed} were timed, but "
                                            f"stopping at call {call} of {calls} makes {max(0, call - 1 - warmup)} "
                                            "hot calls"))
    if latency.cold_failed is not None and (latency.cold_s, latency.first_call_s) != (None, None):
        found.append(("cold_failed", f"the card says the first call failed ({_short(latency.cold_failed)}), but it "
                                     "has a cold figure ($.latency.cold_s, $.latency.first_call_s)"))
    elif latency.cold_failed is None and entries and latency.first_call_s is None:
        found.append(("cold_failed", "the card says null, but its first call has no figure ($.latency.first_call_s "
                                     "is null): a first call that fails says why"))
    return found
