"""Running a decision method over a corpus's rows: limits, batches, concurrency, timeouts, nothing lost.

Before a row is sent, the method's declared limits apply: a row whose input (its state and questions as compact
JSON) has more characters than ``max_input_chars`` fails whole, recorded with the limit — it is never
truncated — and questions of a type the method does not answer fail with the reason. Gold answers are never
sent. Rows go in batches of ``batch_size``, ``concurrency`` batches at a time; a batch gets ``timeout_s`` per row,
and a call that raises, times out or blocks the loop is sent again in halves, down to single rows, so only the
rows the method fails on fail. A method that enforces its own deadlines (a bridge guest: ``enforces_deadlines``) is
given a generous backstop instead, as a translation run gives it (`mt_eval.guarded_calls.backstop_for`), so that its
host, which finds the row a guest fails on, is never cut short. Every result is checked against its
questions (`mt_eval.decisions.answers`) and handed to ``on_results`` as soon as its batch completes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec

from mt_eval.deadlines import Overran, raised_by_a_signal, within
from mt_eval.decisions.answers import DEFAULT_TOLERANCE, match_results
from mt_eval.decisions.records import (
    QUESTION_TYPES,
    DecisionCase,
    DecisionResult,
    DecisionRow,
    QuestionAnswer,
)
from mt_eval.guarded_calls import (
    CallFailed,
    backstop_for,
    call_failure,
    split_on_failure,
    with_report_grace,
    working_directory_kept,
)
from mt_eval.harness.results_log import AppendedLines, LogKind, read_logged, said_once_if_not_saved
from mt_eval.lone_surrogates import problem_in
from mt_eval.loop_watchdog import LoopBlocked, LoopWatchdog
from mt_eval.method_protocol import calls_at_once
from mt_eval.results import NOT_A_RESULT, ResultNotes

_encode = msgspec.json.Encoder().encode
# a decide run's results.jsonl, read and repaired as a translation run's is (`mt_eval.harness.results_log`)
DECISIONS = LogKind(DecisionResult, one="row", many="rows", again="decided again", command="mt-eval decide run",
                    done="decided")


@dataclass(frozen=True)
class DecideSettings:
    batch_size: int = 8
    concurrency: int = 8
    timeout_s: float = 120.0
    tolerance: float = DEFAULT_TOLERANCE
    max_input_chars: int | None = None
    question_types: tuple[str, ...] = QUESTION_TYPES


@dataclass
class DecideTiming:
    first_call_s: float | None = None
    strays: ResultNotes = field(default_factory=ResultNotes)  # (its `stray_warning`: the first calls' strays said)


@dataclass
class _Prepared:
    """A row as it will be sent, and the answers decided before sending (questions it cannot be asked)."""

    case: DecisionCase
    sent: DecisionRow | None
    refused: dict[str, QuestionAnswer] = field(default_factory=dict)
    error: str | None = None


def input_chars(row: DecisionRow) -> int:
    """The size of a row's input: characters of its state and questions as compact JSON."""
    return len(_encode({"state": row.state, "questions": row.questions}).decode("utf-8"))


def prepare(case: DecisionCase, settings: DecideSettings) -> _Prepared:
    """Apply the method's declared limits to one row."""
    asked = {name: q for name, q in case.questions.items() if q.type in settings.question_types}
    refused = {name: QuestionAnswer(error=f"the method does not answer {q.type} questions (method.json "
                                          f"$.decide.question_types: {', '.join(settings.question_types)})")
               for name, q in case.questions.items() if name not in asked}
    if not asked:
        return _Prepared(case=case, sent=None, refused=refused)
    sent = DecisionRow(id=case.id, state=case.state, questions=asked)
    unsendable = problem_in(msgspec.to_builtins(sent), "row")  # as a guest's host says it, in every runtime
    if unsendable is not None:
        return _Prepared(case=case, sent=None, error=unsendable)
    limit = settings.max_input_chars
    if limit is not None and (size := input_chars(sent)) > limit:
        return _Prepared(case=case, sent=None, error=f"the input is {size:,} characters, over the method's limit of "
                                                     f"{limit:,} (method.json $.decide.max_input_chars); the row was "
                                                     "not sent, and it is never truncated")
    return _Prepared(case=case, sent=sent, refused=refused)


def _final(prepared: _Prepared, result: DecisionResult | None) -> DecisionResult:
    """The row's result with the questions it was never asked put back, in the corpus's question order."""
    if result is None:
        result = DecisionResult(id=prepared.case.id, error=prepared.error)
    if prepared.refused and result.error is None:
        answers = {**result.answers, **prepared.refused}
        result.answers = {name: answers[name] for name in prepared.case.questions}
    return result


async def decide_rows(method: Any, cases: Sequence[DecisionCase], config: Any, settings: DecideSettings,
                      on_results: Callable[[list[DecisionResult]], None], *, stuck_message: str = "") -> DecideTiming:
    """Decide ``cases`` with ``method``; every final result goes to ``on_results`` as its batch completes.

    An in-process method whose ``decide`` blocks the event loop (a synchronous call) is interrupted by a
    `LoopWatchdog` after the batch's time (``timeout_s`` a row): its rows are sent again one at a time, so only the
    rows it blocks on fail, and the others go on. One
    that cannot be interrupted (blocked in C code) ends the process, saying ``stuck_message``."""
    # (the rows are made ready before the watchdog starts: it judges the method's code, not this; 40,000 rows took
    # 0.7 s, which it had taken for a blocked loop)
    prepared = [prepare(case, settings) for case in cases]
    unsent = [_final(p, None) for p in prepared if p.sent is None]
    if unsent:
        on_results(unsent)
    sendable = [p for p in prepared if p.sent is not None]
    if getattr(method, "enforces_deadlines", False):  # (a guest: its host's deadlines hold)
        return await _decide_rows(method, sendable, config, settings, on_results)
    limit = max(settings.timeout_s * settings.batch_size, 0.5)
    with LoopWatchdog(limit, hard_limit_s=max(5.0, limit), hard_message=stuck_message, hard_exit_code=1):
        return await _decide_rows(method, sendable, config, settings, on_results)


async def _decide_rows(method: Any, sendable: list[_Prepared], config: Any, settings: DecideSettings,
                       on_results: Callable[[list[DecisionResult]], None]) -> DecideTiming:
    timing = DecideTiming()
    batches = [sendable[i:i + settings.batch_size] for i in range(0, len(sendable), settings.batch_size)]
    pending = iter(batches)
    # (every call holds one: the rows of a batch that timed out, sent alone, share them with the other batches)
    calls = anyio.CapacityLimiter(calls_at_once(method, settings.concurrency))

    async def worker() -> None:
        for batch in pending:
            results = await _decide_batch(method, batch, config, settings, timing, calls)
            on_results([_final(p, r) for p, r in zip(batch, results, strict=True)])

    with said_once_if_not_saved():  # (several workers finding the log unwritable: one says it)
        async with anyio.create_task_group() as group:
            for _ in range(max(1, min(int(calls.total_tokens), len(batches)))):
                group.start_soon(worker)
    return timing


async def _decide_batch(method: Any, batch: list[_Prepared], config: Any, settings: DecideSettings,
                        timing: DecideTiming, calls: anyio.CapacityLimiter) -> list[DecisionResult]:
    """One batch's results. A call that fails as a whole (it raises, times out or blocks the loop) is sent again in
    halves, down to single rows (after a timeout, each row alone, as many calls at once as ``calls`` lets:
    `split_on_failure`, as a translation run does), so only the rows the method fails on get the error."""
    per_row_s = 0.0

    async def call(part: list[_Prepared]) -> list[DecisionResult]:
        nonlocal per_row_s
        rows = [p.sent for p in part if p.sent is not None]
        backstop_s = backstop_for(method, settings.timeout_s, len(rows))
        limit = settings.timeout_s * len(rows) if backstop_s is None else backstop_s
        await calls.acquire()
        started = time.perf_counter()
        try:
            with working_directory_kept("decide()"):
                raw = await within(with_report_grace(limit) if backstop_s is None else backstop_s,
                                   lambda: method.decide(msgspec.to_builtins(rows), config))
        except Overran as overran:
            per_row = f" ({settings.timeout_s:g} s per row)" if backstop_s is None else ""
            raise CallFailed(overran.said(f"timed out after {limit:g} s{per_row}"), timed_out=True) from None
        except LoopBlocked as blocked:  # (raised by the watchdog in the code that blocked the loop)
            raise CallFailed(f"decide() blocked the event loop for {blocked.seconds:.1f} s (a synchronous call in "
                             "an async method: time.sleep, a blocking HTTP client, a long loop): await asynchronous "
                             "I/O, or run it with --isolate", timed_out=True) from None
        except (Exception, SystemExit) as exc:  # a method must not end the run: its rows fail, as for a raise
            raise CallFailed(call_failure(exc)) from None
        except KeyboardInterrupt as exc:
            if raised_by_a_signal(exc):  # Ctrl-C (or SIGTERM): it stops the run
                raise
            raise CallFailed(call_failure(exc)) from None  # the method's own `raise KeyboardInterrupt`
        finally:
            calls.release()
            elapsed = time.perf_counter() - started
            per_row_s = elapsed / len(rows)
            if timing.first_call_s is None:
                timing.first_call_s = elapsed
        return _checked(rows, raw, settings, timing, per_row_s)

    def failed(prepared: _Prepared, message: str) -> DecisionResult:
        return DecisionResult(id=prepared.case.id, error=message, latency_s=per_row_s)

    return await split_on_failure(call, batch, failed, at_once=int(calls.total_tokens))


def _checked(rows: list[DecisionRow], raw: Any, settings: DecideSettings, timing: DecideTiming,
             per_row_s: float) -> list[DecisionResult]:
    """What one call returned, checked against its rows' questions (values no JSON holds fail its rows)."""
    try:
        results, unknown = match_results(rows, raw, "the method", settings.tolerance)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        why = f"the method's results cannot be read: {type(exc).__name__}: {exc}"
        return [DecisionResult(id=row.id, error=why, latency_s=per_row_s) for row in rows]
    ids = [item.get("id") if isinstance(item, Mapping) else NOT_A_RESULT for item in unknown]
    if ids and (said := timing.strays.stray_warning(ids, "row")):  # (as a guest's host says it: bridge.answers)
        logging.getLogger("mt_eval.decisions").warning("%s", said)
    for result in results:
        if result.latency_s == 0.0:
            result.latency_s = per_row_s
    return results


class DecisionLog:
    """``results.jsonl`` of a decide run: one checked result per line, appended as rows complete (a resumed run's
    log is repaired first: `mt_eval.harness.results_log.repair` with `DECISIONS`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines = AppendedLines(path, DECISIONS)

    def append(self, results: list[DecisionResult]) -> None:
        self._lines.write(results)

    def close(self) -> None:
        self._lines.close()

    @staticmethod
    def read(path: Path) -> dict[str, DecisionResult]:
        """The results recorded so far: a torn last line is skipped, any other damage is an error that says
        ``--resume`` repairs it (`mt_eval.harness.results_log.read_logged`)."""
        return read_logged(path, DECISIONS)
