"""Latency the harness measures, not the method: cold start, and hot calls over a fixed sample.

Before the scored run, with the method freshly loaded, the harness makes extra calls whose results are
thrown away (they are never scored entries):

1. **cold**: the first call, one entry, timed; ``cold_s`` is the method's load (and a guest's start) plus
   this call — the first process invocation as a user meets it;
2. **warm-up**: ``warmup`` more one-entry calls, not timed;
3. **hot**: each entry of the fixed sample (the first ``sample`` scored entries, in corpus order) in a call
   of its own, one call at a time (concurrency 1), timed by the harness; the whole sample ``repetitions``
   times. ``hot_p50_s`` and ``hot_p95_s`` are over those timed calls.

What a method says about itself (``latency_s`` in its results) is kept apart, as ``self_reported``: a method
that claims 0.5 s cannot move the measured figures. A call that fails, times out or abstains is not timed
(it says nothing about how fast a translation is); ``hot_failed`` counts those. A call that raises or calls
``sys.exit()`` fails in the words a scored entry would (`mt_eval.guarded_calls.call_failure`). A call that
times out ends the latency calls (``stopped`` says which): a method that hangs would hang every one.
``--latency-sample 0`` makes no latency call at all (for a paid API, say): the card then has no cold or hot
figure.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from mt_eval.corpus.families import family_of
from mt_eval.durations import format_duration

DEFAULT_WARMUP = 3
DEFAULT_SAMPLE = 10
DEFAULT_REPETITIONS = 3
# The most --latency-warmup and --latency-repetitions take: the calls are extra ones, made before the run at
# concurrency 1, and the card lists every timed call; a mistyped 100000000 delayed the run for days.
MAX_WARMUP = 100
MAX_REPETITIONS = 100


@dataclass(frozen=True)
class LatencyPlan:
    """How latency is measured (`mt-eval run --latency-*`; frozen in a freeze manifest)."""

    warmup: int = DEFAULT_WARMUP
    sample: int = DEFAULT_SAMPLE
    repetitions: int = DEFAULT_REPETITIONS

    def __post_init__(self) -> None:
        for name, least in (("warmup", 0), ("sample", 0), ("repetitions", 1)):
            if getattr(self, name) < least:
                raise ValueError(f"--latency-{name} {getattr(self, name)}: give {least} or more")


class Measured(msgspec.Struct, kw_only=True):
    """What the latency calls measured, and the plan they followed (kept in run.json until the card is written)."""

    warmup: int = 0
    repetitions: int = 0
    first_call_s: float | None = None
    first_call_error: str | None = None
    hot_s: list[float] = msgspec.field(default_factory=list)
    hot_failed: int = 0
    sample_ids: list[str] = msgspec.field(default_factory=list)
    stopped: str | None = None  # why the latency calls stopped early (a call timed out)
    start_s: float = 0.0  # a guest's start, before the first call (part of the cold latency)


class SelfReported(msgspec.Struct, kw_only=True):
    """The methods' own ``latency_s`` over the scored run's results: reported, never used as the latency."""

    results: int  # results with a translation: what the figures are over
    p50_s: float | None
    p95_s: float | None


class LatencyFacts(msgspec.Struct, kw_only=True):
    cold_s: float | None  # load + start + the first one-entry call, by the harness
    warmup_entries: int  # untimed warm-up calls (one entry each), extra calls, not scored entries
    hot_entries: int  # entries in the fixed hot sample
    hot_p50_s: float | None
    hot_p95_s: float | None
    # absent from older cards, whose hot figures came from the methods' own latency_s
    measured_by: Literal["harness"] | None = None
    load_s: float | None = None  # loading the method (and starting a guest)
    first_call_s: float | None = None
    cold_failed: str | None = None  # why the first call gave no cold figure (it failed, timed out, abstained)
    repetitions: int | None = None
    hot_calls: int | None = None  # timed calls
    hot_failed: int | None = None  # calls that failed, timed out or abstained (not timed)
    hot_mean_s: float | None = None
    hot_calls_s: list[float] | None = None  # every timed call, in order: the figures above are recomputable
    stopped: str | None = None  # why the latency calls stopped early (a call timed out: none was made after it)
    sample_ids: list[str] | None = None
    self_reported: SelfReported | None = None


def sample_of(entries: Sequence[dict[str, Any]], plan: LatencyPlan) -> list[dict[str, Any]]:
    """The fixed hot sample: the first ``plan.sample`` scored entries, in corpus order."""
    return list(itertools.islice((e for e in entries if family_of(e) == "scored"), plan.sample))


def plan_changes(measured: Measured, entries: Sequence[dict[str, Any]], plan: LatencyPlan) -> list[str]:
    """How ``plan`` (a resume's ``--latency-*``) differs from the plan ``measured`` followed (the run's first
    session's), each as "--latency-sample 3 → 8": the run's latency is measured once, so a resume's would not
    apply. A sample is compared by the entries it times (``--latency-sample`` 40 and 50 of 30 scored entries are
    one sample). Nothing for a record without its plan (``repetitions`` 0: written before it was kept)."""
    if measured.repetitions < 1:
        return []
    sample = [str(entry["id"]) for entry in sample_of(entries, plan)]
    if not sample and not measured.sample_ids:  # (no call then, none now: the warm-up asked for is never made)
        return []
    return [f"--latency-{name} {was} → {now}" for name, was, now, same in (
        ("warmup", measured.warmup, plan.warmup, measured.warmup == plan.warmup),
        ("sample", len(measured.sample_ids), plan.sample, measured.sample_ids == sample),
        ("repetitions", measured.repetitions, plan.repetitions, measured.repetitions == plan.repetitions))
        if not same]


async def measure(method: Any, entries: Sequence[dict[str, Any]], config: Any, plan: LatencyPlan,
                  timeout_s: float, view: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], *,
                  directory: Path | None = None) -> Measured:
    """Make the cold, warm-up and hot calls of the module docstring for a run of ``entries``, each entry
    handed to the method as ``view`` shows it (without its gold and family fields); nothing the calls return
    is kept. No call at all when the sample is empty (``--latency-sample 0``, or no scored entry). ``directory``:
    the plugin's, whose file and line a failure names."""
    measured = Measured(warmup=plan.warmup, repetitions=plan.repetitions,
                        sample_ids=[str(e["id"]) for e in sample_of(entries, plan)])
    sample = view(sample_of(entries, plan))
    if not sample:  # (the card says no warm-up call was made either)
        measured.warmup = 0
        return measured
    timed = [sample[0]] + [sample[i % len(sample)] for i in range(plan.warmup)] + sample * plan.repetitions
    for index, entry in enumerate(timed):
        elapsed, error = await _timed_call(method, entry, config, timeout_s, directory)
        if index == 0:
            measured.first_call_s, measured.first_call_error = elapsed, error
        elif index > plan.warmup:  # the warm-up calls are not timed
            if error is None:
                measured.hot_s.append(elapsed)
            else:
                measured.hot_failed += 1
        if error is not None and error.startswith("timed out"):  # a method that hangs would hang every call
            measured.stopped = f"call {index + 1} of {len(timed)} {error}; no further latency call was made"
            break
    return measured


async def _timed_call(method: Any, entry: dict[str, Any], config: Any, timeout_s: float,
                      directory: Path | None) -> tuple[float, str | None]:
    """Seconds one one-entry call took, and why it does not count (failed, timed out, abstained, or not one result:
    a guest's host drops results that match no entry, ``result_notes`` counting the call, where in this process
    the method's list holds them)."""
    from mt_eval.deadlines import Overran, raised_by_a_signal, within
    from mt_eval.guarded_calls import call_failure, working_directory_kept
    from mt_eval.results import ResultNotes

    notes = getattr(method, "result_notes", None)
    strays_before = notes.stray_seen if isinstance(notes, ResultNotes) else 0
    started = time.perf_counter()
    try:
        with working_directory_kept("translate()"):
            returned = await within(timeout_s, lambda: method.translate([dict(entry)], config))
    except Overran as overran:  # (said as a call that timed out: it ends the latency calls)
        return time.perf_counter() - started, overran.said(f"timed out after {timeout_s:g} s")
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # sys.exit() too: a method must not end the run, nor
        if isinstance(exc, KeyboardInterrupt) and raised_by_a_signal(exc):  # stop it (only Ctrl-C does)
            raise
        return time.perf_counter() - started, call_failure(exc, directory)
    elapsed = time.perf_counter() - started
    item = returned[0] if isinstance(returned, list) and len(returned) == 1 else None
    if item is None or (isinstance(notes, ResultNotes) and notes.stray_seen != strays_before):
        return elapsed, "not one result"
    fields: dict[str, Any] = item if isinstance(item, dict) else {
        "error": getattr(item, "error", None), "abstained": getattr(item, "abstained", False)}
    if fields.get("error") is not None:
        return elapsed, "the result is an error"
    if fields.get("abstained"):
        return elapsed, "the method abstained"
    return elapsed, None


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18] if len(values) > 1 else values[0]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def percentiles(values: Sequence[float]) -> tuple[float | None, float | None]:
    """p50 and p95 (inclusive quantiles) of ``values``, rounded to the microsecond; None without values."""
    if not values:
        return None, None
    return _rounded(statistics.median(values)), _rounded(_p95(list(values)))


def self_reported(results: Iterable[Any]) -> SelfReported:
    """The ``latency_s`` the method reported on the results that carry a translation (its own claim)."""
    latencies = [r.latency_s for r in results if r.predicted is not None and r.error is None]
    p50, p95 = percentiles(latencies)
    return SelfReported(results=len(latencies), p50_s=p50, p95_s=p95)


def latency_facts(measured: Measured | None, load_s: float, results: Iterable[Any]) -> LatencyFacts:
    """The card's latency record from the harness's measurement (None: no latency call was made) and what the
    run's ``results`` report about themselves."""
    measured = measured or Measured()
    load_s += measured.start_s  # loading the method, and starting it when it is a guest
    hot = [round(value, 6) for value in measured.hot_s]  # the card's figures come from the values it lists
    p50, p95 = percentiles(hot)
    first = measured.first_call_s if measured.first_call_error is None else None
    return LatencyFacts(
        cold_s=None if first is None else round(load_s + first, 6), warmup_entries=measured.warmup,
        hot_entries=len(measured.sample_ids), hot_p50_s=p50, hot_p95_s=p95, measured_by="harness",
        load_s=round(load_s, 6), first_call_s=_rounded(first), cold_failed=measured.first_call_error,
        repetitions=measured.repetitions, hot_calls=len(hot), hot_failed=measured.hot_failed,
        hot_mean_s=_rounded(statistics.fmean(hot)) if hot else None, hot_calls_s=hot, stopped=measured.stopped,
        sample_ids=measured.sample_ids, self_reported=self_reported(results))


def reported_latency_facts(first_call_s: float | None, load_s: float, per_entry_s: list[float],
                           warmup: int) -> LatencyFacts:
    """Latency from the first call (cold, with the load) and the results' own ``latency_s`` after ``warmup``
    entries: what a decision card records (its hot figures are self-reported, ``measured_by`` null)."""
    hot = per_entry_s[warmup:]
    p50, p95 = percentiles(hot)
    cold = None if first_call_s is None else round(first_call_s + load_s, 6)
    return LatencyFacts(cold_s=cold, warmup_entries=warmup, hot_entries=len(hot), hot_p50_s=p50, hot_p95_s=p95)


def seconds(value: float) -> str:
    """``2.50 s``, ``12.3 ms`` or ``45 µs`` (`mt_eval.durations`)."""
    return format_duration(value)


def nothing_measured(facts: LatencyFacts) -> bool:
    """No latency figure at all: no cold call timed and no hot call (--latency-sample 0, no scored entry, or a
    first call that failed)."""
    return facts.cold_s is None and not facts.hot_calls


def latency_line(facts: LatencyFacts, *, scored: int | None = None) -> str:
    """The run summary's latency line: measured figures, the self-reported ones apart (``scored``: the run's
    scored entries, where known; the calls are made with scored entries only)."""
    if facts.measured_by != "harness":
        return "latency: self-reported by the method (a card from an older mt-eval)"
    if nothing_measured(facts):
        why = f" (the first call: {facts.cold_failed})" if facts.cold_failed else " (--latency-sample 0)"
        if not facts.cold_failed and scored == 0:
            why = " (the run has no scored entry: the latency calls are made with scored entries only)"
        return "latency: not measured" + why
    parts = [f"cold {seconds(facts.cold_s)}" if facts.cold_s is not None else f"cold: {facts.cold_failed}"]
    if facts.hot_p50_s is not None and facts.hot_p95_s is not None:
        parts.append(f"hot p50 {seconds(facts.hot_p50_s)}, p95 {seconds(facts.hot_p95_s)} over {facts.hot_calls} "
                     f"timed calls")
    if facts.stopped:
        parts.append(f"stopped: {facts.stopped}")
    reported = facts.self_reported
    if reported is not None and reported.p50_s is not None:
        parts.append(f"self-reported p50 {seconds(reported.p50_s)} (not used)")
    return "latency (measured by the harness): " + "; ".join(parts)
