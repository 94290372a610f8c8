"""`RecordProcess`: one long-running translator program, driven record by record.

Records are written as soon as they are submitted, so many can be in flight: the program works on one
while the next ones wait in its stdin pipe, and every program of a shell pipeline is busy at once.
Answers come back in order and are matched to records first in, first out. Like the bridge host, it runs
on asyncio's subprocess protocol: answers resolve their futures in the event loop's I/O callback, and
there is no reader task to own, so any number of tasks can share one program.

A record that fails raises `RecordFailure`, whose ``kind`` says what happened:

- ``timeout``: the oldest record got no answer within ``timeout_s`` of becoming the oldest; the program is
  stuck on it and is killed (with its whole process group);
- ``exited``: the program exited, or closed its stdout, with records in flight; ``alone`` tells whether
  the record was the only one in flight, and so certainly the one the program failed on;
- ``interrupted``: the program was killed because of another record; this one may simply be sent again;
- ``oversized``: an answer grew beyond ``max_record_bytes`` without its terminator;
- ``unavailable``: the program cannot be started (or keeps failing: see `mt_eval.adapters.stage`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from mt_eval.process_group import ChildPipes, StderrTail, close_group, exit_status, last_lines, signal_group

log = logging.getLogger("mt_eval.adapters")
program_log = logging.getLogger("mt_eval.adapters.program")

FailureKind = Literal["timeout", "exited", "interrupted", "oversized", "unavailable", "mismatch"]


@dataclass(frozen=True)
class ProcessOptions:
    """Limits of a translator program; every value has a safe default."""

    timeout_s: float = 30.0  # per record, counted from when it becomes the oldest one in flight
    max_record_bytes: int = 16 * 1024 * 1024
    shutdown_grace_s: float = 2.0
    stderr_tail_bytes: int = 64 * 1024
    stderr_tail_lines: int = 40
    restart_budget: int = 5  # unplanned restarts allowed per restart_window_s
    restart_window_s: float = 60.0


class RecordFailure(Exception):
    """A record got no answer; `entry_error` is the one-line text its entry carries."""

    def __init__(self, kind: FailureKind, message: str, *, stderr_tail: str = "", alone: bool = True) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.stderr_tail = stderr_tail
        self.alone = alone

    def entry_error(self) -> str:
        tail = last_lines(self.stderr_tail)
        return f"{self.message} | stderr: {tail}" if tail else self.message


class _Waiter:
    __slots__ = ("future", "mark")

    def __init__(self, future: asyncio.Future[bytes], mark: int) -> None:
        self.future = future
        self.mark = mark  # how much stderr had arrived when the record was written


class RecordProcess:
    """A running program answering records in order. `start`, then `submit` and await, then `aclose`.

    ``restart_when`` (optional) is called with what the program wrote to stderr while it handled a record;
    when it returns true the process *retires*: it takes no more records, and its owner starts a fresh one.
    That is how a program whose state leaks from one record into the next is kept exact, and it is only
    meaningful when one record is in flight at a time.
    """

    def __init__(self, command: Sequence[str], terminator: bytes, *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, options: ProcessOptions | None = None,
                 label: str | None = None, restart_when: Callable[[str], bool] | None = None) -> None:
        if not command:
            raise ValueError("a translator program needs at least the program to run")
        self.command = list(command)
        self.terminator = terminator
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.options = options or ProcessOptions()
        self.label = label or os.path.basename(self.command[0])
        self.restart_when = restart_when
        self.exit_code: int | None = None
        self.retiring = False
        self.stray_answers = 0
        self._stderr = StderrTail(program_log, self.label, max_bytes=self.options.stderr_tail_bytes,
                                  max_lines=self.options.stderr_tail_lines)
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._fifo: deque[_Waiter] = deque()
        self._unsettled = 0
        self._buffer = bytearray()
        self._timer: asyncio.TimerHandle | None = None
        self._head_since = 0.0  # when the oldest record in flight became the oldest
        self._idle = asyncio.Event()
        self._idle.set()
        self._exited = asyncio.Event()
        self._stdout_closed = False
        self._gone_timer: asyncio.TimerHandle | None = None
        self._gone = False
        self._closing = False

    # ---- lifecycle -------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def alive(self) -> bool:
        """Running and taking records."""
        return self._transport is not None and not (self._gone or self._closing or self.retiring)

    @property
    def in_flight(self) -> int:
        return len(self._fifo) + self._unsettled

    def stderr_tail(self) -> str:
        return self._stderr.tail()

    async def start(self) -> None:
        """Start the program in its own process group; raises `RecordFailure` ("unavailable")."""
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: ChildPipes(self), *self.command, cwd=self.cwd, env=self.env, start_new_session=True,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as exc:
            raise RecordFailure("unavailable", f"cannot start {self.label} ({self.command[0]}): "
                                f"{exc.strerror or exc}") from exc
        self._transport = transport
        self._stdin = transport.get_pipe_transport(0)  # type: ignore[assignment]

    async def drained(self) -> None:
        """Wait until no record is in flight."""
        await self._idle.wait()

    async def aclose(self) -> None:
        """Close stdin (the program finishes what is in flight), then SIGTERM and SIGKILL its group."""
        if self._transport is None or self._closing:
            return
        self._closing = True
        try:
            await close_group(self.pid, self._close_stdin, self._exited, self.options.shutdown_grace_s)
        finally:
            if not self._exited.is_set():
                signal_group(self.pid, signal.SIGKILL)
            self._fail_all("interrupted", f"{self.label} was shut down")
            self._transport.close()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin.close()

    # ---- records ---------------------------------------------------------------------------------

    def submit(self, record: bytes) -> asyncio.Future[bytes]:
        """Write ``record`` now (records are answered in the order written); the future gets its answer."""
        if not self.alive or self._stdin is None or self._stdin.is_closing():
            raise RecordFailure("exited", f"{self.label} is not running", stderr_tail=self.stderr_tail())
        loop = asyncio.get_running_loop()
        waiter = _Waiter(loop.create_future(), self._stderr.total)
        self._fifo.append(waiter)
        self._idle.clear()
        if len(self._fifo) == 1:
            self._head_since = loop.time()
            if self._timer is None:
                self._timer = loop.call_at(self._head_since + self.options.timeout_s, self._time_out)
        self._stdin.write(record + self.terminator)
        return waiter.future

    def on_started(self, transport: asyncio.SubprocessTransport) -> None:
        self._transport = transport

    def on_stderr(self, data: bytes) -> None:
        self._stderr.feed(data)

    def on_stdout_closed(self) -> None:
        self._stdout_closed = True
        self._check_gone()

    def on_stdout(self, data: bytes) -> None:
        if self._gone:  # killed: whatever it still wrote answers nothing
            return
        buffer = self._buffer
        buffer += data
        size = len(self.terminator)
        start = 0
        while (end := buffer.find(self.terminator, start)) >= 0:
            self._answer(bytes(buffer[start:end]))
            start = end + size
        if start:
            del buffer[:start]
        if len(buffer) > self.options.max_record_bytes and not self._gone:
            self._kill("oversized", f"{self.label} sent an answer over {self.options.max_record_bytes} bytes")

    def _answer(self, data: bytes) -> None:
        if not self._fifo:
            if self._closing:  # many null-flush programs flush once more when their input ends
                return
            self.stray_answers += 1
            log.warning("%s: dropped an answer that matches no record: %r", self.label, data[:120])
            return
        waiter = self._fifo.popleft()
        self._head_since = asyncio.get_running_loop().time()  # the next record's clock starts now
        if self.restart_when is None:
            _resolve(waiter.future, data)
            self._check_idle()
        else:  # the stderr of this loop turn is read before the check runs
            self._unsettled += 1
            asyncio.get_running_loop().call_soon(self._settle, waiter, data)

    def _settle(self, waiter: _Waiter, data: bytes) -> None:
        self._unsettled -= 1
        assert self.restart_when is not None
        if not self.retiring and self.restart_when(self._stderr.since(waiter.mark)):
            self.retiring = True
            log.debug("%s: retiring after a record that changed its state", self.label)
        _resolve(waiter.future, data)
        self._check_idle()

    def _check_idle(self) -> None:
        if not self._fifo and not self._unsettled:
            self._idle.set()

    def _time_out(self) -> None:
        """One timer per process, re-armed lazily: it only acts when the oldest record is overdue."""
        self._timer = None
        if not self._fifo or self._gone:
            return
        loop = asyncio.get_running_loop()
        due = self._head_since + self.options.timeout_s
        if loop.time() < due - 1e-3:
            self._timer = loop.call_at(due, self._time_out)
            return
        self._kill("timeout", f"{self.label} gave no answer within {self.options.timeout_s:g} s")

    def _kill(self, kind: FailureKind, message: str) -> None:
        """The program is stuck: the oldest record fails with ``kind``, the others are interrupted."""
        if self._fifo:
            _fail(self._fifo.popleft().future, RecordFailure(kind, message, stderr_tail=self.stderr_tail()))
        self._gone = True
        signal_group(self.pid, signal.SIGKILL)
        self._fail_all("interrupted", f"{self.label} was restarted ({message})")

    # ---- the program going away ----------------------------------------------------------------

    def on_exit(self) -> None:
        if self._transport is not None:
            self.exit_code = self._transport.get_returncode()
        self._exited.set()
        self._check_gone()

    def _check_gone(self) -> None:
        if self._exited.is_set() and self._stdout_closed:
            self._declare_gone()
        elif self._gone_timer is None and not self._gone:
            self._gone_timer = asyncio.get_running_loop().call_later(0.5, self._declare_gone)

    def _declare_gone(self) -> None:
        if self._gone_timer is not None:
            self._gone_timer.cancel()
        if self._gone:
            return
        self._gone = True
        if not self._closing:
            self._fail_all("exited", f"{self.label} {exit_status(self.exit_code)}")

    def _fail_all(self, kind: FailureKind, message: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        alone = len(self._fifo) == 1
        tail = self.stderr_tail()
        while self._fifo:
            _fail(self._fifo.popleft().future, RecordFailure(kind, message, stderr_tail=tail, alone=alone))
        self._check_idle()


def _resolve(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():  # a caller that gave up (was cancelled) leaves a done future behind
        future.set_result(data)


def _fail(future: asyncio.Future[bytes], failure: RecordFailure) -> None:
    if not future.done():
        future.set_exception(failure)
        future.exception()  # retrieved here, so a caller that went away leaves no "never retrieved" warning
