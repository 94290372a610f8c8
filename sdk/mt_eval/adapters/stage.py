"""A stage of a record pipeline: one program kept running, restarted when it crashes or hangs.

`StageRunner` owns the current `RecordProcess` of a `Stage` and decides how records reach it:

- records are pipelined (many in flight) unless the stage is ``lockstep``;
- a record whose program exited while other records were in flight, or after it had been sent others, is
  sent again *alone*, to a fresh program if need be, so the record that really makes the program fail is
  found and fails by itself, with the program's stderr tail, and one the program ended before reading does not;
- a record interrupted by another record's failure is simply sent again;
- a program that died is restarted on the next record, within a crash-loop budget
  (`ProcessOptions.restart_budget` restarts per `restart_window_s`); planned restarts (``restart_when``)
  do not count, and neither does a restart after a program that answered records before it failed, or
  one that failed on a record sent to it alone to find out whether that record is the cause;
- a failure no restart cures (``lasting``: a program that cannot be started, or that buffers its output) fails
  every later record at once, with the same message: no start is tried again, no timeout waited out again.

A program that exits with code 0 after one answer, time and again, reads one record and exits: once two of its
processes have, its records' failures say so (and that ``persistent=False`` runs it), as does a warning.

Many tasks may share a runner: the order in which records are written is the order of their answers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mt_eval.adapters.framing import Framing
from mt_eval.adapters.hints import ONE_SHOT, command_words
from mt_eval.adapters.program_names import program_name
from mt_eval.adapters.record_process import ProcessOptions, RecordFailure, RecordProcess
from mt_eval.child_policy import RestartBudget, SoloGate

log = logging.getLogger("mt_eval.adapters")


@dataclass(frozen=True)
class Stage:
    """One program of a record pipeline (its argv), and how to drive it.

    ``lockstep``: one record in flight at a time, for programs that read ahead or cannot be pipelined.
    ``restart_when``: a regular expression searched in what the program writes to stderr while it handles
    a record; a match replaces the program with a fresh one before the next record (for programs whose
    state leaks from one record into the next). It implies lockstep.
    """

    command: tuple[str, ...]
    lockstep: bool = False
    restart_when: str | None = None
    label: str | None = None
    env: Mapping[str, str] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "command", argv(self.command))
        if self.restart_when is not None:
            re.compile(self.restart_when)  # a bad pattern fails here, not at the first record

    @property
    def name(self) -> str:
        return self.label or program_name(self.command)


def argv(command: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    """``command`` as the words of an argv, paths (``directory / "bin" / "my-mt"``) as strings; raises for none, for
    one string (whose characters would be words), and for a word that is neither a string nor a path."""
    if isinstance(command, (str, bytes)):
        shown = command if isinstance(command, str) else command.decode(errors="replace")
        raise TypeError(f"the command is one string ({shown!r}); give the program and its arguments as a list of "
                        f"words: {command_words(shown)}")
    if not command:
        raise ValueError("a stage needs at least the program to run")
    words = []
    for number, word in enumerate(command, 1):
        if isinstance(word, os.PathLike):
            word = os.fspath(word)
        if not isinstance(word, str):
            raise TypeError(f"word {number} of the command {list(command)!r} is {type(word).__name__} {word!r}, not "
                            f"a string: give it as one, str({word!r})")
        words.append(word)
    return tuple(words)


class StageRunner:
    """Keeps one program of ``stage`` running and sends it records (see the module docstring)."""

    def __init__(self, stage: Stage, framing: Framing, *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, options: ProcessOptions | None = None) -> None:
        self.stage = stage
        self.framing = framing
        self.cwd = cwd
        self.env = {**(env or os.environ), **stage.env} if stage.env else env
        self.options = options or ProcessOptions()
        self.restarts = 0  # after crashes, hangs and oversized answers
        self.renewals = 0  # planned: after restart_when matched, or to send a record to a fresh program
        self._pattern = re.compile(stage.restart_when) if stage.restart_when else None
        self._isolated = stage.lockstep or self._pattern is not None
        self._process: RecordProcess | None = None
        self._started = False
        self._budget = RestartBudget(self.options.restart_budget, self.options.restart_window_s)
        self._last_failure: RecordFailure | None = None
        self._lasting: RecordFailure | None = None  # no restart cures it: every later record fails so at once
        self._trial: RecordProcess | None = None  # the fresh program a suspect record was last sent to
        self._one_shots = 0  # programs replaced after exiting as one that reads one record and exits does
        self._start_lock = asyncio.Lock()
        self._gate = SoloGate()
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def in_flight(self) -> int:
        return self._process.in_flight if self._process is not None else 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def ask(self, record: bytes, timeout_s: float | None = None) -> bytes:
        """The program's answer to ``record`` (within ``timeout_s`` of its turn: see `ProcessOptions`); raises
        `RecordFailure` when the record itself fails."""
        alone = self._isolated
        suspect = fresh = False  # suspect: it was in flight when a program that had been sent others exited
        interruptions = 0
        while True:
            try:
                answer = await (self._ask_alone(record, timeout_s, fresh=fresh, suspect=suspect) if alone
                                else self._ask_shared(record, timeout_s))
                return self.framing.answer_to(record, answer)
            except RecordFailure as failure:
                if failure.kind in ("exited", "timeout", "oversized"):
                    self._last_failure = failure
                if failure.kind == "interrupted" and interruptions < 3:
                    interruptions += 1
                elif failure.kind == "exited" and not failure.alone and not alone:
                    alone = True  # find out whether this record is the one the program fails on
                    suspect = failure.after_others
                elif failure.kind == "exited" and failure.after_others and not fresh:
                    alone = fresh = suspect = True  # it may have ended before reading it: ask one that has not
                else:
                    if failure.kind == "exited":
                        self._explain_exit(failure)
                    raise

    async def _ask_shared(self, record: bytes, timeout_s: float | None) -> bytes:
        gate = self._gate
        if not gate.try_enter_shared():  # (the gate's hot path: one check while nothing is sent alone)
            await gate.enter_shared()
        try:
            process = self._process
            if process is None or not process.alive:
                process = await self._current()
            return await process.submit(record, timeout_s)
        finally:
            gate.leave_shared()

    async def _ask_alone(self, record: bytes, timeout_s: float | None, *, fresh: bool = False,
                         suspect: bool = False) -> bytes:
        async with self._gate.alone():
            while True:
                process = await self._current()
                if process.in_flight:
                    await process.drained()  # a retiring process still answers what it has
                elif fresh and process.records_sent:  # renewed, so the record is the first this program gets
                    process.retiring = True
                else:
                    break
            if suspect and not process.records_sent:  # a program failing on it alone is no crash loop: see _current
                self._trial = process
            return await process.submit(record, timeout_s)

    async def _current(self) -> RecordProcess:
        process = self._process
        if process is not None and process.alive:
            return process
        async with self._start_lock:
            process = self._process
            if process is not None and process.alive:
                return process
            if self._lasting is None and process is not None:  # (known even when its record's caller gave up)
                self._lasting = process.lasting
            if self._lasting is not None:  # no restart would cure it: not tried again
                raise self._lasting.again()
            if process is not None:
                self._process = None
                self._retire(process)
                if process.retiring:
                    self.renewals += 1
                else:
                    self._one_shots += process.one_shot
                    if self._one_shots == 2 and process.one_shot:  # (its records may still be answered, slowly)
                        log.warning("%s exited after one answer twice, and is started again for each record: %s",
                                    self.stage.name, ONE_SHOT)
                    self._count_restart(productive=process.answered > 0 or process is self._trial)
            elif self._started:
                self._count_restart()  # the last start failed, or the budget ran out
            self._started = True
            fresh = RecordProcess(self.stage.command, self.framing, cwd=self.cwd, env=self.env,
                                  options=self.options, label=self.stage.name, restart_when=self._restart_when)
            try:
                await fresh.start()
            except RecordFailure as failure:
                self._last_failure = failure
                if failure.lasting:
                    self._lasting = failure
                raise
            self._process = fresh
            return fresh

    async def start_early(self) -> None:
        """Start the program before its first record comes (`ProcessTranslator` starts a pipeline's programs
        together, not each as the first record reaches it); one that cannot start fails that record with the
        reason (tried again first only if the cause may pass, as a lack of memory or file descriptors)."""
        if self._started:
            return
        try:
            await self._current()
        except RecordFailure:
            self._started = False  # (no restart to count: the record's own start is the first that counts)

    def _explain_exit(self, failure: RecordFailure) -> None:
        """Tell a program that reads one record and exits, once more than one has done so, how to run it."""
        process = self._process
        times = self._one_shots + (process is not None and not process.retiring and process.one_shot)
        if times > 1 and not failure.stderr_tail and failure.message.endswith("exited with code 0"):
            failure.message += f" (again after writing one answer, with nothing on stderr): {ONE_SHOT}"

    def _restart_when(self, stderr: str) -> bool:
        return self._pattern is not None and self._pattern.search(stderr) is not None

    def _count_restart(self, *, productive: bool = False) -> None:
        if not self._budget.allow(productive=productive):
            last = self._last_failure.entry_error() if self._last_failure is not None else "unknown"
            raise RecordFailure("unavailable", f"{self.stage.name} keeps failing: {self._budget.describe()}; "
                                f"last failure: {last}")
        self.restarts += 1
        log.warning("restarting %s (restart %d)", self.stage.name, self.restarts)

    def _retire(self, process: RecordProcess) -> None:
        """Close a replaced process in the background (a retiring one first answers what is in flight)."""
        task = asyncio.ensure_future(process.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            await process.aclose()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
