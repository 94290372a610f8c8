"""Running a loaded method over the entries still to do, from its start to its ``aclose()``.

- A method running as a guest is started first: a guest that cannot start (its ``translate.js`` does not
  load, it exits or never answers initialize) fails the run once, at once, with the guest's own words and
  the fix — never as the same error on every entry.
- What it prints goes to stderr (`mt_eval.guarded_calls.prints_to_stderr`): standard output is the result.
- Its ``aclose()`` is awaited for a bounded time (`mt_eval.guarded_calls.guarded_close`): one that raises or
  hangs is a warning line, and the run goes on to its card.
- An in-process method runs under a `mt_eval.loop_watchdog.LoopWatchdog`. One that blocks the event loop
  (a synchronous call inside ``async translate``) for longer than a whole batch may take is interrupted;
  the run then carries on with the method in a guest process of its own (as ``--isolate`` does), where a
  call that blocks is timed out and killed like any other, and the card says so.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from mt_eval import event_loop
from mt_eval.corpus.families import by_pair
from mt_eval.guarded_calls import guarded_close, prints_to_stderr
from mt_eval.harness.execution import Outcome, ResultsLog, RunSettings, execute
from mt_eval.harness.outcome import EXIT_ERROR
from mt_eval.loader import LoadedMethod
from mt_eval.loop_watchdog import LoopWatchdog, find_blocked
from mt_eval.method_protocol import TranslationMethod
from mt_eval.method_start import StartFailed, start_method
from mt_eval.records import RunConfig, TranslationResult
from mt_eval.results import ResultNotes

OnResult = Callable[[TranslationResult], None]  # called with every final result as it is logged


@dataclass
class Translated:
    """What running the method gave: the outcome, the method that finished the run, and how it ran."""

    outcome: Outcome
    loaded: LoadedMethod
    moved_to_guest: str | None = None  # why the method was moved into its own process mid-run
    begun: Any = None  # what `Around.begin` gave


@dataclass(frozen=True)
class Around:
    """What else runs with the method: ``running(label)`` around it (a gateway, a sandbox's watch),
    ``begin(loaded)`` once it has started (its card, which a guest sends at initialize: the value is kept in
    `Translated.begun`), ``before(method, start_s)`` just before its entries, watched like them (the latency
    calls; ``start_s``: how long a guest took to start), and ``finish(method)`` once every entry is done (a
    substitution replay). ``view`` is each group of entries as the method is handed it (without the gold
    and family fields)."""

    running: Callable[[str], AbstractAsyncContextManager[Any]] | None = None
    begin: Callable[[LoadedMethod], Awaitable[Any]] | None = None
    before: Callable[[TranslationMethod, float], Awaitable[None]] | None = None
    finish: Callable[[TranslationMethod], Awaitable[None]] | None = None
    view: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    can_move: bool = True  # whether a method that blocks the event loop may carry on in a guest


def run_method(loaded: LoadedMethod, entries: Sequence[dict[str, Any]], config: RunConfig, settings: RunSettings,
               log: ResultsLog, on_result: OnResult, *,
               isolated: Callable[[], LoadedMethod], resume_hint: str, around: Around | None = None,
               outcome: Outcome | None = None) -> Translated:
    """Translate ``entries``; ``isolated()`` loads the same method in a guest process of its own. ``outcome``: the
    counts so far and the retry budget, when the run is resumed (default: a budget for ``entries``, none spent)."""
    around = around or Around()
    watchdog_message = (f"mt-eval run: {loaded.method_id} blocked the event loop and could not be interrupted; "
                        f"finished entries are saved. Run it in its own process: {resume_hint} --isolate")
    if outcome is None:
        outcome = Outcome(retry_budget=settings.budget_for(len(entries)))  # for all of them, whatever the calls
    ran = Translated(outcome, loaded)
    try:
        with prints_to_stderr():  # what the method prints is not the run's result
            event_loop.run(_start_execute_close, ran, entries, config, settings, log, on_result, around,
                           watchdog_message)
        return ran
    except BaseException as error:
        blocked = find_blocked(error)
        if blocked is None:
            raise
    reason = (f"{loaded.method_id} blocked the event loop for {blocked.seconds:.1f} s inside translate() (a "
              "synchronous call in an async method: time.sleep, a blocking HTTP client, a long loop)")
    fix = "Fix: await asynchronous I/O in translate(), or run blocking code with `await asyncio.to_thread(...)`"
    if not around.can_move:
        raise StartFailed(f"{reason}; finished entries are saved. {fix}, or run it in its own process: "
                          f"{resume_hint} --isolate")
    print(f"mt-eval run: {reason}; carrying on with it in its own process, as with --isolate. {fix}",
          file=sys.stderr)
    moved = Translated(outcome, isolated(), moved_to_guest=reason, begun=ran.begun)
    remaining = log.unlogged(entries)  # (one reading of the log, not one for each entry it holds)
    with prints_to_stderr():
        event_loop.run(_start_execute_close, moved, remaining, config, settings, log, on_result, around,
                       watchdog_message)
    return moved


async def _start_execute_close(ran: Translated, entries: Sequence[dict[str, Any]], config: RunConfig,
                               settings: RunSettings, log: ResultsLog, on_result: OnResult, around: Around,
                               watchdog_message: str) -> None:
    running = around.running(ran.loaded.method_id) if around.running else contextlib.nullcontext()
    async with running:
        await _execute_and_close(ran, entries, config, settings, log, on_result, around, watchdog_message)


async def _execute_and_close(ran: Translated, entries: Sequence[dict[str, Any]], config: RunConfig,
                             settings: RunSettings, log: ResultsLog, on_result: OnResult, around: Around,
                             watchdog_message: str) -> None:
    loaded, outcome = ran.loaded, ran.outcome
    method = loaded.method
    if isinstance(getattr(method, "result_notes", None), ResultNotes):  # a guest's results, as its host accepts them:
        method.result_notes = outcome.notes  # type: ignore[attr-defined]  # (counted with the run's as they come)
    try:
        with _ctrl_c_not_held_up(method, watchdog_message):  # (a start that blocks the loop may: a model loaded)
            start_s = await start_method(loaded, config) if entries or around.begin else 0.0
        if around.begin is not None:
            ran.begun = await around.begin(loaded)
        first_call = outcome.timing.first_call_s

        async def translate() -> None:
            if around.before is not None:
                await around.before(method, start_s)
            for group_config, group in by_pair(entries, config):  # negative controls of another pair: their own
                await execute(method, group, group_config, settings, log, on_result, directory=loaded.directory,
                              outcome=outcome, view=around.view)

        if getattr(method, "enforces_deadlines", False):
            await translate()
        else:
            limit = max(settings.timeout_s * settings.batch_size, 0.5)
            with LoopWatchdog(limit, hard_limit_s=max(5.0, limit), hard_message=watchdog_message,
                              hard_exit_code=EXIT_ERROR):  # the run could not continue (no card)
                await translate()
        if first_call is None and outcome.timing.first_call_s is not None:
            outcome.timing.first_call_s += start_s  # a guest's cold start is part of its first call
        if around.finish is not None:
            await around.finish(method)
    finally:  # a method that fails or hangs in aclose() costs a warning, not the card
        await guarded_close(method, loaded.method_id, prog="mt-eval run", directory=loaded.directory)


def _ctrl_c_not_held_up(method: object, stuck_message: str) -> contextlib.AbstractContextManager[Any]:
    """For an in-process method's ``start()``, which may block the event loop as long as it likes (loading a
    model): Ctrl-C is raised in the blocked call all the same (`mt_eval.loop_watchdog`), not when it returns."""
    if getattr(method, "enforces_deadlines", False):  # (a guest: its host's deadlines hold)
        return contextlib.nullcontext()
    return LoopWatchdog(math.inf, hard_limit_s=10.0, hard_message=stuck_message, hard_exit_code=EXIT_ERROR)
