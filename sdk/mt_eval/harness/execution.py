"""Running a method over corpus entries: bounded concurrency, batches, timeouts, retries, nothing lost.

Workers (``concurrency`` of them) take batches of ``batch_size`` entries from one queue. A batch gets
``timeout_s`` per entry. A call that raises or calls ``sys.exit()`` is sent again in halves, down to single
entries, and one that times out one entry per call, as many calls at once as the method takes
(`mt_eval.guarded_calls`), so only the entries it fails on fail. Failed entries are
retried (``retries`` times each) while the run's retry budget lasts. Every final result is appended to
the results log as it completes, so an interrupted run can be resumed.

A method that enforces its own deadlines (a bridge guest: ``enforces_deadlines``) is given a generous
backstop instead, so that its host, which finds the entry a guest fails on, is never cut short.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from mt_eval.corpus.on_disk import in_blocks
from mt_eval.guarded_calls import backstop_for, guarded_translate, split_on_failure
from mt_eval.harness.results_log import ResultsLog, said_once_if_not_saved
from mt_eval.method_protocol import calls_at_once
from mt_eval.records import RunConfig, TranslationResult
from mt_eval.results import ResultNotes, error_result, results_for

if TYPE_CHECKING:
    from mt_eval.method_protocol import TranslationMethod

__all__ = ["Outcome", "ResultsLog", "RunSettings", "Timing", "execute"]


@dataclass(frozen=True)
class RunSettings:
    batch_size: int = 8
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 1
    retry_budget: int | None = None

    def budget_for(self, entries: int) -> int:
        """Total retries a run may spend: given, or 10% of the entries (at least 10)."""
        return self.retry_budget if self.retry_budget is not None else max(10, entries // 10)


@dataclass
class Timing:
    """Wall-clock facts of one run (the cold latency; hot latency comes from the results' latency_s)."""

    first_call_s: float | None = None


@dataclass
class Outcome:
    completed: int = 0
    retries_used: int = 0
    retry_budget: int | None = None  # the retries the whole run may spend (its calls of `execute` share them)
    timing: Timing = field(default_factory=Timing)
    notes: ResultNotes = field(default_factory=ResultNotes)  # what was changed to accept the method's results

    def normalised_with(self, earlier: dict[str, int]) -> dict[str, int]:
        """What the run's earlier sessions (``earlier``) and this one changed to accept results, by change."""
        notes = ResultNotes()
        notes.merge(earlier)
        notes.merge(self.notes.counts)
        return notes.counts


async def execute(method: TranslationMethod, entries: Sequence[dict[str, Any]], config: RunConfig,
                  settings: RunSettings, log: ResultsLog, on_result: Callable[[TranslationResult], None], *,
                  directory: Path | None = None, outcome: Outcome | None = None,
                  view: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None) -> Outcome:
    """Translate ``entries`` with ``method``, each batch as ``view`` shows it (when given); every final result
    goes to ``log`` and ``on_result``. Counts add up in ``outcome`` when one is given (a run carried on by
    another method keeps its first part's), and its ``retry_budget`` is spent across calls (one per language
    pair, say): a run retries no more than its budget. Batches are read as workers take them (entries on disk
    stay there until their turn); entries to retry queue up behind them."""
    outcome = outcome if outcome is not None else Outcome()
    if outcome.retry_budget is None:
        outcome.retry_budget = settings.budget_for(len(entries))
    budget = max(0, outcome.retry_budget - outcome.retries_used)
    attempts: dict[str, int] = {}
    batches: Iterator[list[dict[str, Any]]] | None = in_blocks(entries, settings.batch_size)
    retries: deque[list[dict[str, Any]]] = deque()
    busy = waiting = 0
    wake = anyio.Event()
    # (every call of the method holds one: the entries of a batch that timed out, sent alone, share them too)
    calls = anyio.CapacityLimiter(calls_at_once(method, settings.concurrency))

    def next_batch() -> list[dict[str, Any]] | None:
        nonlocal batches
        if batches is not None:
            batch = next(batches, None)
            if batch is not None:
                return view(batch) if view is not None else batch
            batches = None
        if not retries:
            return None
        retry = retries.popleft()
        outcome.retries_used += len(retry)  # spent when sent: one still queued when the run stops was not
        return retry

    async def worker() -> None:
        nonlocal busy, waiting, budget, wake
        while True:
            batch = next_batch()
            if batch is None:
                if busy == 0:
                    return
                waiting += 1
                try:
                    await wake.wait()  # a batch in flight may come back with entries to retry
                finally:
                    waiting -= 1
                continue
            busy += 1
            try:
                results = await _translate_batch(method, batch, config, settings, outcome, directory, calls)
            finally:
                busy -= 1
                if waiting:
                    wake.set()
                    wake = anyio.Event()
            final, retry = [], []
            for entry, result in zip(batch, results, strict=True):
                tries = attempts.get(result.id, 0)
                if result.error is not None and tries < settings.retries and budget > 0:
                    attempts[result.id] = tries + 1
                    budget -= 1
                    retry.append(entry)
                else:
                    final.append(result)
            if retry:
                retries.append(retry)
            if final:
                log.append(final)
                outcome.completed += len(final)
                for result in final:
                    on_result(result)

    with said_once_if_not_saved():  # (a full disk, found by several workers at once)
        async with anyio.create_task_group() as group:
            workers = calls_at_once(method, settings.concurrency)  # (fewer when the method declares fewer)
            for _ in range(max(1, min(workers, -(-len(entries) // max(1, settings.batch_size))))):
                group.start_soon(worker)
    return outcome


async def _translate_batch(method: TranslationMethod, batch: list[dict[str, Any]], config: RunConfig,
                           settings: RunSettings, outcome: Outcome, directory: Path | None,
                           calls: anyio.CapacityLimiter) -> list[TranslationResult]:
    backstop_s = backstop_for(method, settings.timeout_s, len(batch))
    timing = outcome.timing
    elapsed = 0.0

    async def call(part: list[dict[str, Any]]) -> list[TranslationResult]:
        nonlocal elapsed
        async with calls:
            started = time.perf_counter()
            try:
                raw = await guarded_translate(method, [dict(e) for e in part], config, timeout_s=settings.timeout_s,
                                              directory=directory, backstop_s=backstop_s)
            finally:
                elapsed = time.perf_counter() - started
                if timing.first_call_s is None:
                    timing.first_call_s = elapsed
        paired, unknown = results_for(part, raw, label="the method", notes=outcome.notes, elapsed_s=elapsed)
        if unknown and (said := outcome.notes.stray_warning(unknown)):  # (as a guest's host says it)
            logging.getLogger("mt_eval.harness").warning("%s", said)
        return paired

    def failed(entry: dict[str, Any], message: str) -> TranslationResult:
        return error_result(str(entry["id"]), message, elapsed)

    return await split_on_failure(call, batch, failed, at_once=int(calls.total_tokens))
