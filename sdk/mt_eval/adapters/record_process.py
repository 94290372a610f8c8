"""`RecordProcess`: one long-running translator program, driven record by record.

Records are written as soon as they are submitted, so many can be in flight: the program works on one
while the next ones wait in its stdin pipe, and every program of a shell pipeline is busy at once.
Answers come back in order. Under an aligned framing (`mt_eval.adapters.framing`) a marker follows each
record, and the answers between two markers belong to one record: exactly one is its translation, any
other count fails that record (``mismatch``) and no other. It is a `mt_eval.child_process.ChildProcess`,
like the bridge host's guests: answers resolve their futures in the event loop's I/O callback, and any
number of tasks can share one program.

A record that fails raises `RecordFailure`, whose ``kind`` says what happened:

- ``timeout``: the oldest record got no answer within its timeout of becoming the oldest; the program is
  stuck on it and is killed (with its whole process group) — and when it has written nothing at all, the
  message says it probably buffers its output, and how to stop that (or that it closed its stdin, if it did):
  then every record in flight fails so, as it is ``lasting`` (see below); one known to be working all along
  (`mt_eval.process_state.group_busy`: still starting, loading a model) is told to take a longer timeout instead,
  and restarted;
- ``exited``: the program exited, or closed its stdout, with records in flight; ``alone`` tells whether
  the record was the only one in flight, and ``after_others`` whether the program had been sent others
  before it (it may then have ended after answering them, before reading this record): a record alone in
  a program that got no other is certainly the one it failed on;
- ``interrupted``: the program was killed because of another record; this one may simply be sent again;
- ``oversized``: an answer grew beyond ``max_record_bytes`` without its terminator;
- ``mismatch``: the program wrote no answer, or several, for this record;
- ``unavailable``: the program cannot be started (or keeps failing: see `mt_eval.adapters.stage`).

A failure no restart can cure is ``lasting`` — a program that cannot be started (not found, not executable, a
directory), or that buffers its output — and its stage fails every later record with it at once.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from mt_eval.adapters.framing import Framing, Markers
from mt_eval.adapters.hints import (
    buffering_hint,
    cannot_start,
    closed_input,
    oversized_answer,
    shown_answers,
    still_busy,
)
from mt_eval.child_process import ChildProcess, LazyTimer
from mt_eval.child_stderr import last_lines
from mt_eval.process_state import group_busy, group_reads_stdin

log = logging.getLogger("mt_eval.adapters")
program_log = logging.getLogger("mt_eval.adapters.program")

FailureKind = Literal["timeout", "exited", "interrupted", "oversized", "unavailable", "mismatch"]


DEFAULT_TIMEOUT_S = 30.0
QUIET_WARNING_S = 5.0  # a program silent this long after its first record, waiting for input, is warned about
# Why a start can fail and work when tried again: the system was short of processes, memory or file descriptors.
TRANSIENT_START_ERRORS = frozenset({errno.EAGAIN, errno.ENOMEM, errno.EMFILE, errno.ENFILE, errno.EINTR})


@dataclass(frozen=True)
class ProcessOptions:
    """Limits of a translator program; every value has a safe default.

    ``timeout_s``: seconds per record, counted from when it becomes the oldest one in flight. Left ``None``, a
    call with a run's config (``ProcessTranslator.translate(entries, config)``) uses the run's own per-entry
    timeout (``RunConfig.timeout_s``: ``mt-eval run --timeout``), so the harness and the program agree; a call
    without one (``translate_texts``) uses 30 s.
    """

    timeout_s: float | None = None
    max_record_bytes: int = 16 * 1024 * 1024
    shutdown_grace_s: float = 2.0
    stderr_tail_bytes: int = 64 * 1024
    stderr_tail_lines: int = 40
    restart_budget: int = 5  # unplanned restarts allowed per restart_window_s
    restart_window_s: float = 60.0


class RecordFailure(Exception):
    """A record got no answer; `entry_error` is the one-line text its entry carries. ``lasting``: no restart
    can cure it (see the module docstring)."""

    def __init__(self, kind: FailureKind, message: str, *, stderr_tail: str = "", alone: bool = True,
                 after_others: bool = False, lasting: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.stderr_tail = stderr_tail
        self.alone = alone
        self.after_others = after_others
        self.lasting = lasting

    def again(self) -> RecordFailure:
        """The same failure for another record (a lasting one fails every later record so)."""
        return RecordFailure(self.kind, self.message, stderr_tail=self.stderr_tail, lasting=self.lasting)

    def entry_error(self) -> str:
        tail = last_lines(self.stderr_tail)
        return f"{self.message} | stderr: {tail}" if tail else self.message


class _Waiter:
    __slots__ = ("answers", "count", "future", "mark", "seq", "timeout_s")

    def __init__(self, future: asyncio.Future[bytes], mark: int, seq: int, timeout_s: float) -> None:
        self.future = future
        self.timeout_s = timeout_s
        self.mark = mark  # how much stderr had arrived when the record was written
        self.seq = seq  # its marker's number (aligned framings)
        self.count = 0  # answers received before its marker
        self.answers: list[bytes] = []  # the first two of them


class RecordProcess(ChildProcess):
    """A running program answering records in order. `start`, then `submit` and await, then `aclose`.

    ``restart_when`` (optional) is called with what the program wrote to stderr while it handled a record;
    when it returns true the process *retires*: it takes no more records, and its owner starts a fresh one.
    That is how a program whose state leaks from one record into the next is kept exact, and it is only
    meaningful when one record is in flight at a time.
    """

    def __init__(self, command: Sequence[str], framing: Framing, *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, options: ProcessOptions | None = None,
                 label: str | None = None, restart_when: Callable[[str], bool] | None = None) -> None:
        self.options = options or ProcessOptions()
        super().__init__(command, cwd=cwd, env=env, label=label, logger=program_log,
                         tail_bytes=self.options.stderr_tail_bytes, tail_lines=self.options.stderr_tail_lines,
                         grace_s=self.options.shutdown_grace_s, stderr_encoding=framing.encoding)
        self.framing = framing
        self.terminator = framing.terminator
        self.markers = Markers(encoding=framing.encoding) if framing.aligned else None
        self._past_banner = False  # marker 0 (sent at start) came back: what it prints now answers records
        self.restart_when = restart_when
        self.retiring = False
        self.stray_answers = 0
        self.answered = 0  # records answered: a program that did work is not crash-looping
        self.output_bytes = 0  # all it wrote on stdout: none at all, with records waiting, suggests buffering
        self.input_closed = False  # it closed its stdin while running: it reads no more records
        self.lasting: RecordFailure | None = None  # why it was killed, when no restart would cure that
        self._quiet_check: asyncio.TimerHandle | None = None
        self._fifo: deque[_Waiter] = deque()
        self._seq = 0
        self._unsettled = 0
        self._buffer = bytearray()
        self._timer = LazyTimer(self._time_out)
        self._head_since = 0.0  # when the oldest record in flight became the oldest
        self._idle = asyncio.Event()
        self._idle.set()

    # ---- lifecycle -------------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Running and taking records."""
        return self.running and not self.retiring

    @property
    def in_flight(self) -> int:
        return len(self._fifo) + self._unsettled

    @property
    def records_sent(self) -> int:
        """How many records it has been sent (answered or not)."""
        return self._seq

    @property
    def one_shot(self) -> bool:
        """It exited with code 0 after one answer at most (a record's, or the start marker's echo) and wrote
        nothing on stderr, as a program that reads one record and exits does."""
        return self.exit_code == 0 and self.output_bytes > 0 and self.answered <= 1 and not self._stderr.total

    async def start(self) -> None:
        """Start the program in its own process group; raises `RecordFailure` ("unavailable")."""
        try:
            await self.spawn()
        except OSError as exc:
            raise RecordFailure("unavailable", cannot_start(self.label, self.command, exc, self.cwd),
                                lasting=exc.errno not in TRANSIENT_START_ERRORS) from exc
        if self.markers is not None:  # what it prints before this marker's echo is a banner, no record's answer
            self.write(self.markers.marker(0) + self.terminator)

    async def drained(self) -> None:
        """Wait until no record is in flight."""
        await self._idle.wait()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0 and not self._closing:  # (stdin is closed by us only when closing)
            self.input_closed = True
        super().pipe_connection_lost(fd, exc)

    def on_closed(self) -> None:
        self._fail_all("interrupted", f"{self.label} was shut down")

    # ---- records ---------------------------------------------------------------------------------

    def submit(self, record: bytes, timeout_s: float | None = None) -> asyncio.Future[bytes]:
        """Write ``record`` now (records are answered in the order written); the future gets its answer, or
        fails when none comes within ``timeout_s`` (default: the options', else 30 s) of its turn."""
        if not self.alive or self._stdin is None:
            raise RecordFailure("exited", f"{self.label} is not running", stderr_tail=self.stderr_tail())
        loop = self._loop  # (set when it was spawned; asking asyncio for it costs a getpid() call on Python 3.11)
        assert loop is not None
        self._seq += 1
        timeout = timeout_s or self.options.timeout_s or DEFAULT_TIMEOUT_S
        waiter = _Waiter(loop.create_future(), self._stderr.total, self._seq, timeout)
        self._fifo.append(waiter)
        self._idle.clear()
        if len(self._fifo) == 1:
            self._head_since = loop.time()
            self._timer.ensure(self._head_since + timeout)
        if self._quiet_check is None and self.output_bytes == 0:
            self._quiet_check = loop.call_later(QUIET_WARNING_S, self._warn_if_silent)
        data = record + self.terminator
        if self.markers is not None:
            data += self.markers.marker(self._seq) + self.terminator
        self.write(data)  # (a program that closed its stdin is ending: the record fails as it goes, and is sent again)
        return waiter.future

    def on_output(self, data: bytes) -> None:
        self.output_bytes += len(data)
        if self._gone:  # killed: whatever it still wrote answers nothing
            return
        buffer = self._buffer
        buffer += data
        size = len(self.terminator)
        start = 0
        while (end := buffer.find(self.terminator, start)) >= 0:
            answer = bytes(buffer[start:end])
            if self.markers is None:
                self._answer(answer)
            else:
                self._aligned(answer)
            start = end + size
        if start:
            del buffer[:start]
        if len(buffer) > self.options.max_record_bytes and not self._gone:
            self._kill("oversized", oversized_answer(self.label, self.options.max_record_bytes))

    def _aligned(self, answer: bytes) -> None:
        """An answer under an aligned framing: a record's answer, or a marker closing the records up to it."""
        assert self.markers is not None
        seq = self.markers.seq_in(answer)
        if not self._past_banner:
            if seq is None:
                program_log.debug("%s (before its first record): %r", self.label, answer[:200])
                return
            self._past_banner = True  # (a program that lost marker 0 is past its banner at marker 1)
            if seq == 0:
                return
        if seq is None:
            if self._fifo:
                waiter = self._fifo[0]
                waiter.count += 1
                if len(waiter.answers) < 2:
                    waiter.answers.append(answer)
            elif not self._closing:
                self._stray(answer)
            return
        while self._fifo and self._fifo[0].seq <= seq:
            waiter = self._fifo[0]
            if waiter.seq == seq and waiter.count == 1:
                self._answer(waiter.answers[0])
                continue
            self._fifo.popleft()
            self._next_head()
            if waiter.seq < seq:
                why = "its answer and the next record's cannot be told apart (the program lost a marker line)"
            elif waiter.count == 0:
                why = "the program wrote no answer for it"
            else:
                why = f"the program wrote {waiter.count} lines for it instead of one " \
                      f"({shown_answers(waiter.answers, waiter.count, self.framing.encoding)})"
            _fail(waiter.future, RecordFailure("mismatch", f"{self.label}: {why}", stderr_tail=self.stderr_tail()))
            self._check_idle()

    def _warn_if_silent(self) -> None:
        """Early word, long before a timeout, of a program that took its records and wrote nothing."""
        if self._fifo and not self._gone and self.output_bytes == 0 and group_reads_stdin(self.pid):
            log.warning("%s has read its input and written nothing for %g s%s", self.label, QUIET_WARNING_S,
                        buffering_hint(self.command, self.pid, lead=""))

    def _stray(self, answer: bytes) -> None:
        self.stray_answers += 1
        log.warning("%s: dropped an answer that matches no record: %r", self.label, answer[:120])

    def _answer(self, data: bytes) -> None:
        if not self._fifo:
            if not self._closing:  # many null-flush programs flush once more when their input ends
                self._stray(data)
            return
        waiter = self._fifo.popleft()
        self.answered += 1
        self._next_head()
        if self.restart_when is None:
            _resolve(waiter.future, data)
            self._check_idle()
        else:  # the check runs two turns of the loop later: stderr written with the answer has been read by then
            self._unsettled += 1
            loop = self._loop
            assert loop is not None
            loop.call_soon(loop.call_soon, self._settle, waiter, data)

    def _settle(self, waiter: _Waiter, data: bytes) -> None:
        self._unsettled -= 1
        assert self.restart_when is not None
        if not self.retiring and self.restart_when(self._stderr.since(waiter.mark)):
            self.retiring = True
            log.debug("%s: retiring after a record that changed its state", self.label)
        _resolve(waiter.future, data)
        self._check_idle()

    def _next_head(self) -> None:
        """The next record's clock starts now (its own timeout may be shorter than the one the timer serves)."""
        loop = self._loop
        assert loop is not None
        self._head_since = loop.time()
        if self._fifo:
            self._timer.ensure(self._head_since + self._fifo[0].timeout_s)

    def _check_idle(self) -> None:
        if not self._fifo and not self._unsettled:
            self._idle.set()

    def _time_out(self) -> None:
        """The lazily re-armed timer: it only acts when the oldest record is overdue."""
        if not self._fifo or self._gone:
            return
        timeout = self._fifo[0].timeout_s
        due = self._head_since + timeout
        if self._loop is not None and self._loop.time() < due - 1e-3:
            self._timer.ensure(due)
            return
        message = f"{self.label} gave no answer within {timeout:g} s"
        buffering = False
        if self.input_closed and not self.exited:
            message = closed_input(self.label, timeout)
        elif self.output_bytes == 0 and group_busy(self.pid):  # (known to be working: still starting, or slow)
            message += still_busy()
        elif self.output_bytes == 0:  # (waiting for more input, or not known to work: it buffers)
            message += buffering_hint(self.command, self.pid)
            buffering = True
        elif self.markers is not None and (self._fifo[0].count or not self._past_banner):
            message = (f"{self.label} wrote lines but passed back no marker line ({self.markers.shown('SEQ')}, sent "
                       f"after each record) within {timeout:g} s, so none can be matched to a record: a program that "
                       "changes or drops such lines runs with persistent=False (one process per batch)")
            buffering = not self._past_banner and not group_busy(self.pid)  # (never one, and idle: no restart helps)
        if self._quiet_check is not None:
            self._quiet_check.cancel()
        self._kill("timeout", message, lasting=buffering)

    def _kill(self, kind: FailureKind, message: str, *, lasting: bool = False) -> None:
        """The program is stuck: the oldest record fails with ``kind``, the others are interrupted (sent again),
        or, when no restart can cure it, fail as the oldest did."""
        failure = RecordFailure(kind, message, stderr_tail=self.stderr_tail(), lasting=lasting)
        if lasting:
            self.lasting = failure
        while self._fifo:
            _fail(self._fifo.popleft().future, failure.again())
            if not lasting:
                break
        self.kill()
        self._fail_all("interrupted", f"{self.label} was restarted ({message})")

    # ---- the program going away ----------------------------------------------------------------

    def on_gone(self, status: str) -> None:
        self._fail_all("exited", f"{self.label} {status}")

    def _fail_all(self, kind: FailureKind, message: str) -> None:
        self._timer.cancel()
        if self._quiet_check is not None:
            self._quiet_check.cancel()
        alone = len(self._fifo) == 1
        tail = self.stderr_tail()
        while self._fifo:
            waiter = self._fifo.popleft()
            _fail(waiter.future, RecordFailure(kind, message, stderr_tail=tail, alone=alone,
                                               after_others=waiter.seq > 1))
        self._check_idle()


def _resolve(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():  # a caller that gave up (was cancelled) leaves a done future behind
        future.set_result(data)


def _fail(future: asyncio.Future[bytes], failure: RecordFailure) -> None:
    if not future.done():
        future.set_exception(failure)
        future.exception()  # retrieved here, so a caller that went away leaves no "never retrieved" warning
