"""A method's call under a deadline the method cannot swallow.

anyio's cancellation is level-triggered: past a deadline it cancels the task again on every turn of the event
loop until the task leaves the cancel scope. That ends a method that catches ``CancelledError`` once, or awaits
again in ``finally:``, but not one that catches it every time and waits again: the loop spins cancelling it for
ever, the task group around it waits for it for ever, and Ctrl-C, which cancels the same way, cannot end the
run. A coroutine cannot be killed from outside its own code.

`within` therefore awaits the call in an asyncio task of its own, outside every task group and cancel scope.
Past the deadline, or when the caller is cancelled (Ctrl-C, another call that failed), that task is cancelled,
and again every ``RECANCEL_S`` (a method that awaits in ``finally:`` stops at the second). A call that ends
within ``CANCEL_GRACE_S`` has timed out (`Overran`). One that does not is abandoned
(`mt_eval.event_loop.abandon`): it stays on the loop, never awaited again, and ``Overran.abandoned`` says so;
only a method running in a process of its own (``--isolate``) can be killed.

Otherwise what the call returns or raises is the caller's, ``sys.exit()`` included: it is raised again in the
caller (raised in a task, ``SystemExit`` would go straight to the event loop and end the run). A ``CancelledError``
that nothing but the method raised is its failure (`CancelledItself`): raised again as it is, it would stop the
caller as Ctrl-C does, and a run would lose the call's entries without a word; so is a ``BaseException`` of the
method's own (`RaisedBase`), which would end the run with a traceback.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

from mt_eval import event_loop

T = TypeVar("T")

CANCEL_GRACE_S = 1.0
RECANCEL_S = 0.1
IGNORED_CANCELLATION = ("the method did not stop when cancelled: it catches CancelledError and carries on, so the "
                        "call was left running")
ISOLATE = "run it with --isolate so it can be killed"  # (the fix where a command has --isolate)


class Overran(TimeoutError):
    """The call ran past its deadline and was cancelled; ``abandoned``: it did not stop, and is left running."""

    def __init__(self, *, abandoned: bool) -> None:
        super().__init__(IGNORED_CANCELLATION if abandoned else "the deadline passed")
        self.abandoned = abandoned

    def said(self, timed_out: str, fix: str = ISOLATE) -> str:
        """``timed_out`` (``timed out after 2 s``), and why the call is still running, and ``fix``, when it is."""
        return f"{timed_out}, and {IGNORED_CANCELLATION}; {fix}" if self.abandoned else timed_out


class CancelledItself(Exception):
    """The call ended in ``CancelledError`` though nothing cancelled it: the method raised it, or let out that of
    a task or future it awaited (a failure of the call, not a stop of the run, which would drop its entries)."""

    def __init__(self) -> None:
        super().__init__("the method raised CancelledError, though nothing cancelled its call (a task or future it "
                         "awaited was cancelled): catch it there, or raise another exception")


class RaisedBase(Exception):
    """A ``BaseException`` of the method's own (``class Odd(BaseException)``: no exit, no cancellation, no Ctrl-C)
    carried out of its call as an ``Exception``: its call's failure, where raised as itself it would end the run."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(type(raised).__name__)  # (its own str() may raise: `call_failure` says it)
        self.raised = raised


class _Exited(Exception):
    """``sys.exit()`` in the call, or its own ``raise KeyboardInterrupt``, carried out of its task."""

    def __init__(self, exit_: SystemExit | KeyboardInterrupt) -> None:
        super().__init__()
        self.exit = exit_


async def within(seconds: float | None, call: Callable[[], Awaitable[T]]) -> T:
    """``await call()``, for ``seconds`` at most (None: no deadline); `Overran` past them."""
    loop = asyncio.get_running_loop()
    task = loop.create_task(_exit_kept(call))
    # (a bare future and timer: anyio's Event and cancel scope cost as much again as a harness's whole call)
    ended = loop.create_future()
    task.add_done_callback(functools.partial(_end, ended))
    timer = None if seconds is None or math.isinf(seconds) else loop.call_later(seconds, _end, ended)
    try:
        await ended
    except asyncio.CancelledError:  # the caller is cancelled: so is the call
        await _stop(task)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    if not task.done():
        raise Overran(abandoned=not await _stop(task))
    if task.cancelled():  # (neither its deadline nor its caller cancelled it)
        raise CancelledItself
    try:
        return task.result()
    except _Exited as exited:
        raise exited.exit from None


def _end(ended: asyncio.Future[None], _: object = None) -> None:
    if not ended.done():
        ended.set_result(None)


async def _exit_kept(call: Callable[[], Awaitable[T]]) -> T:
    own_task = asyncio.current_task()
    try:
        return await call()
    except SystemExit as exc:
        raise _Exited(exc) from None
    except KeyboardInterrupt as exc:  # (Ctrl-C goes to the event loop: it stops the run)
        if raised_by_a_signal(exc):
            raise
        raise _Exited(exc) from None
    except BaseException as exc:
        from mt_eval.loop_watchdog import LoopBlocked

        if isinstance(exc, Exception | asyncio.CancelledError | LoopBlocked):  # (the watchdog's own interruption of
            raise  # a call that blocked the loop: its caller says so)
        if isinstance(exc, GeneratorExit) and closed_from_outside(own_task):
            raise
        raise RaisedBase(exc) from exc


def closed_from_outside(own_task: asyncio.Task[Any] | None) -> bool:
    """Whether a ``GeneratorExit`` caught in a coroutine stepped by ``own_task`` is its ``close()`` (thrown in while
    it waits, which it must let out) rather than the method's own ``raise GeneratorExit``: a coroutine is closed
    only while its task is not running it."""
    return own_task is None or asyncio.current_task() is not own_task


def raised_by_a_signal(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt came from a signal: raised by the handler asyncio's runner puts on Ctrl-C (at the
    second one: the first cancels the run instead), or by `mt_eval.cli.termination` for SIGTERM, rather than by a
    method's own code (which is then its call's failure, not the user's Ctrl-C)."""
    from mt_eval.loop_watchdog import InterruptedWhileBlocked

    if isinstance(exc, InterruptedWhileBlocked):  # (Ctrl-C while a method blocked the event loop)
        return True
    last = exc.__traceback__
    while last is not None and last.tb_next is not None:
        last = last.tb_next
    if last is None:
        return True
    code = last.tb_frame.f_code
    return (code.co_name, Path(code.co_filename).parts[-2:]) in _SIGNAL_HANDLERS


# The functions that raise KeyboardInterrupt for a signal, by name and the last two parts of their file's path.
_SIGNAL_HANDLERS = {("_on_sigint", ("asyncio", "runners.py")), ("_interrupt", ("cli", "termination.py"))}


async def _stop(task: asyncio.Task[Any]) -> bool:
    """Cancel ``task`` until it ends, for ``CANCEL_GRACE_S`` at most; whether it ended (if not, it is abandoned).
    What it ended with is dropped, but for an interruption (`mt_eval.loop_watchdog.LoopBlocked`): raised. Shielded:
    Ctrl-C meanwhile waits for the grace (it is short), and the call is either ended or abandoned."""
    ended = anyio.Event()
    task.add_done_callback(lambda _: ended.set())
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_S):
        while not task.done():
            task.cancel()
            with anyio.move_on_after(RECANCEL_S):
                await ended.wait()
    if not task.done():
        event_loop.abandon(task)
        return False
    error = None if task.cancelled() else task.exception()
    if error is not None and not isinstance(error, Exception):
        raise error
    return True
