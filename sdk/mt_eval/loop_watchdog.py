"""Noticing an event loop that synchronous code has blocked, and getting it back.

A method's ``translate`` is ``async``; one that makes a synchronous call inside it (an HTTP client
without ``await``, ``time.sleep``, a long CPU loop) stops the whole event loop, so no timeout can fire
and the run would hang for as long as that call does — forever, for a server that never answers.

`LoopWatchdog` runs a heartbeat in the loop and a thread that watches it. When the loop has not turned
for ``limit_s`` seconds, the thread sends the main thread a signal whose handler raises `LoopBlocked`
right where the blocking code is (a blocking system call is interrupted; pure Python stops at its next
instruction). If even that does not bring the loop back within ``hard_limit_s`` more — code blocked in
a C extension that never returns to Python — the watchdog writes ``hard_message`` to stderr and ends
the process with ``hard_exit_code``: whatever was already saved stays saved, and nothing hangs.

Ctrl-C goes through the watchdog too. The event loop's own handling of it (cancel the command, and let it save
and say what it did) needs the loop to turn, which a blocked loop does not: a method in ``time.sleep(60)`` kept
Ctrl-C waiting for the whole call, or for the watchdog's limit. So a Ctrl-C that comes while the loop has been
blocked for `BLOCKED_NOW_S` raises `InterruptedWhileBlocked` (a `KeyboardInterrupt`) right in the blocked call,
and the command stops as at a second Ctrl-C; one that comes while the loop turns is handled as before, and the
watchdog then interrupts a call that blocks the loop for `BLOCKED_AFTER_S` the same way. A Ctrl-C that comes just
before the blocking call begins would wait for it to end before its handler runs at all: the watchdog hears of it
(`mt_eval.signal_arrivals`) and wakes the main thread, so that it runs at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType

from mt_eval.background_threads import BackgroundThread
from mt_eval.process_exit import real_exit
from mt_eval.signal_arrivals import SignalArrivals

HEARTBEAT_S = 0.05
# Interrupts sent before the loop turns again: one for each call in flight that goes on to block it, up to this
# many; past them the code is taken to swallow the interrupt (an `except BaseException` in a loop), and the process
# ends as for a block that cannot be interrupted.
MAX_INTERRUPTS = 16
BLOCKED_NOW_S = 1.0  # a loop that has not turned for this long when Ctrl-C comes is blocked (by a method's call)
# After a Ctrl-C, a call that blocks the loop this long is interrupted. What a command writes once stopped (run.json,
# the summary) it writes after its loop has ended, where no watchdog runs; `mt-eval locales`, which writes its locale
# files on the loop, keeps a longer limit of its own.
BLOCKED_AFTER_S = 0.5
# A signal that came while the loop was blocked, which has not let the loop turn after this long, may be one whose
# handler waits for the blocking call to return: the main thread is woken (a no-op signal: its handler then runs).
NUDGE_AFTER_S = 0.1


class LoopBlocked(BaseException):
    """The event loop was blocked for ``seconds``; raised in the code that blocked it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the event loop was blocked for {seconds:.1f} s")
        self.seconds = seconds


class InterruptedWhileBlocked(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) while synchronous code blocked the event loop: raised in that code, it stops the
    command as Ctrl-C does (`mt_eval.deadlines.raised_by_a_signal` tells it from a method's own raise)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"interrupted while the event loop was blocked for {seconds:.1f} s")
        self.seconds = seconds


class LoopWatchdog:
    """Use as ``with LoopWatchdog(...):`` inside a coroutine running in the main thread."""

    def __init__(self, limit_s: float, *, hard_limit_s: float = 10.0, hard_message: str = "",
                 hard_exit_code: int = 1) -> None:
        self.limit_s = limit_s
        self.hard_limit_s = hard_limit_s
        self.hard_message = hard_message
        self.hard_exit_code = hard_exit_code
        self.blocked_for = 0.0
        self._beat = time.monotonic()
        self._stop = threading.Event()
        self._fired = False
        self._sent: float | None = None  # when the interrupt was sent, until it comes through
        self._delivered: float | None = None  # when the last one came through
        self._interrupts = 0  # sent since the loop last turned
        self._handle: asyncio.TimerHandle | None = None
        self._thread: threading.Thread | None = None
        self._previous: signal._HANDLER = None
        self._previous_sigint: Callable[[int, FrameType | None], object] | None = None
        self._armed = False
        self._error: Callable[[float], BaseException] = LoopBlocked
        self._arrivals = SignalArrivals()
        self._listening = False  # the thread hears of each signal (`SignalArrivals`)
        self._signal_at: float | None = None  # when a signal came that may need the main thread woken

    def __enter__(self) -> LoopWatchdog:
        loop = asyncio.get_running_loop()
        self._beat = time.monotonic()
        self._heartbeat(loop)
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGUSR1, self._interrupt)
            self._armed = True
            self._listening = self._arrivals.open()
            sigint = signal.getsignal(signal.SIGINT)
            if callable(sigint):  # (not where Ctrl-C is ignored: a script's background job)
                self._previous_sigint = sigint
                signal.signal(signal.SIGINT, self._on_sigint)
        self._thread = BackgroundThread(target=self._watch, name="mt-eval loop watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._stop.set()
        self._arrivals.wake()
        if self._handle is not None:
            self._handle.cancel()
        if self._thread is not None:
            self._thread.join()
        if self._listening:
            self._arrivals.close()
        if self._armed:
            signal.signal(signal.SIGUSR1, self._previous)
        if self._previous_sigint is not None and signal.getsignal(signal.SIGINT) == self._on_sigint:
            signal.signal(signal.SIGINT, self._previous_sigint)

    def hurry(self, limit_s: float, error: Callable[[float], BaseException]) -> None:
        """From now on, a loop blocked for ``limit_s`` (or the limit given, when shorter) is interrupted with
        ``error(seconds)`` instead of `LoopBlocked` (Ctrl-C: the blocked call fails, and the command ends)."""
        self.limit_s = min(self.limit_s, limit_s)
        self._error = error

    def blocked_s(self) -> float:
        """How long the loop has not turned (about 0 when it runs; from a signal handler in the main thread,
        how long the code it interrupted has kept the loop from turning)."""
        return max(0.0, time.monotonic() - self._beat - HEARTBEAT_S)

    def _heartbeat(self, loop: asyncio.AbstractEventLoop) -> None:
        self._beat = time.monotonic()
        self._handle = loop.call_later(HEARTBEAT_S, self._heartbeat, loop)

    def _watch(self) -> None:
        main = threading.main_thread().ident
        while self._waited():
            now = time.monotonic()
            blocked = now - self._beat
            self._nudge(now, main)
            if blocked < self.limit_s:
                self._fired, self._sent, self._delivered, self._interrupts = False, None, None, 0
                continue
            since = now - self._delivered if self._delivered is not None else blocked
            # blocked again since the last interrupt came through: before the loop could turn, another call it had
            # started went on to block it (one per call in flight) — or the same code swallowed the interrupt
            again = self._sent is None and self._delivered is not None and since >= self.limit_s
            if not self._fired or (again and self._interrupts < MAX_INTERRUPTS):
                self._fired = True
                self.blocked_for = since
                self._interrupts += 1
                if self._armed and main is not None:
                    self._sent = now
                    signal.pthread_kill(main, signal.SIGUSR1)
            elif (now - self._sent >= self.hard_limit_s if self._sent is not None
                  else again or (not self._armed and blocked >= self.limit_s + self.hard_limit_s)):
                # the interrupt never came through (code blocked in C), was swallowed every time, or could not be sent
                with contextlib.suppress(OSError, ValueError):  # (a stderr whose reader is gone: the end still comes)
                    sys.stderr.write(self.hard_message + "\n")
                    sys.stderr.flush()
                real_exit(self.hard_exit_code)

    def _waited(self) -> bool:
        """A heartbeat waited (less, when a signal came); False once the watchdog is to stop."""
        if not self._listening:
            return not self._stop.wait(HEARTBEAT_S)
        came = self._arrivals.wait(HEARTBEAT_S) - {signal.SIGUSR1}  # (not the watchdog's own)
        if came and self._signal_at is None:
            self._signal_at = time.monotonic()
        return not self._stop.is_set()

    def _nudge(self, now: float, main: int | None) -> None:
        """The main thread woken when a signal came and the loop has not turned since (see `NUDGE_AFTER_S`)."""
        if self._signal_at is None or now - self._signal_at < NUDGE_AFTER_S:
            return
        if self._beat < self._signal_at and main is not None:
            signal.pthread_kill(main, signal.SIGUSR1)  # (`_interrupt` does nothing unless the watchdog fired)
        self._signal_at = None

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        """Ctrl-C: raised at once in the code blocking the loop, else handled as before this watchdog; and from
        now on a call that blocks the loop for `BLOCKED_AFTER_S` is interrupted with it."""
        if not self._stop.is_set():
            self.hurry(BLOCKED_AFTER_S, InterruptedWhileBlocked)  # (calls started as the command winds down, too)
            blocked = self.blocked_s()
            if blocked >= BLOCKED_NOW_S:
                raise InterruptedWhileBlocked(blocked)
        if self._previous_sigint is not None:
            self._previous_sigint(signum, frame)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        if self._fired and not self._stop.is_set():
            self._sent, self._delivered = None, time.monotonic()
            raise self._error(self.blocked_for)


def find_blocked(error: BaseException) -> LoopBlocked | None:
    """The `LoopBlocked` in ``error``, which a task group may have wrapped in exception groups."""
    if isinstance(error, LoopBlocked):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = find_blocked(inner)
            if found is not None:
                return found
    return None
