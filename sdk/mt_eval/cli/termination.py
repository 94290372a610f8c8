"""SIGTERM and SIGHUP stop a command as Ctrl-C does.

A command stopped by ``kill``, a service manager or a terminal that closes ends the way Ctrl-C ends it — its
guests are shut down with their process groups (each guest leads a group of its own, so a signal sent to the
command never reaches it), what was finished is kept, and one line says so — rather than at once, leaving its
guests running. Each of these signals is passed on as SIGINT to whatever handles Ctrl-C at that moment (Python's
own handler, the event loop's runner, a command's own receiver), so a command has one way to stop. `exit_status`
then gives 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP), as a shell reports a process the signal
ended, instead of Ctrl-C's 130, and `said` names the signal in the command's message.

A signal the command was started ignoring (``nohup``) stays ignored, and a forked worker process gets the
defaults back. `mt-eval serve` keeps the defaults (its ``KEEPS_SIGNAL_DEFAULTS``): a guest ends at once when its
host sends SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
INTERRUPTED = 130  # Ctrl-C's exit status

_received: signal.Signals | None = None


@contextlib.contextmanager
def as_interrupt() -> Iterator[None]:
    """While inside, each of `SIGNALS` left at its default stops the command as SIGINT does (in the main thread,
    the only one a signal's handler can be set in)."""
    global _received
    _received = None
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _interrupt) for sig in SIGNALS
                if main and signal.getsignal(sig) is signal.SIG_DFL}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    global _received
    _received = _received or signal.Signals(signum)
    if not callable(signal.getsignal(signal.SIGINT)):  # Ctrl-C ignored (a script's background job) or not handled
        raise KeyboardInterrupt
    signal.raise_signal(signal.SIGINT)


_fork_mask = threading.local()  # the forking thread's signal mask while it forks


def _block_before_fork() -> None:
    """Hold `SIGNALS` back across a fork while `_interrupt` handles them: one sent to a worker just forked
    (``Pool.terminate``) then waits until `_defaults_in_child` has put the default back, and ends the worker. Without
    this it ran `_interrupt` in the child's first Python code (another fork hook), the KeyboardInterrupt was lost
    there, and the worker lived on, its pool waiting for it for ever."""
    if any(signal.getsignal(sig) is _interrupt for sig in SIGNALS):
        _fork_mask.previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


def _restore_after_fork() -> None:
    previous = getattr(_fork_mask, "previous", None)
    if previous is not None:
        _fork_mask.previous = None
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _defaults_in_child() -> None:
    """A forked worker (multiprocessing) is ended by its parent's SIGTERM at once, as it always was: the defaults
    come back before the signals held back since the fork are let through."""
    for sig in SIGNALS:
        if signal.getsignal(sig) is _interrupt:
            signal.signal(sig, signal.SIG_DFL)
    _restore_after_fork()


os.register_at_fork(before=_block_before_fork, after_in_parent=_restore_after_fork,
                    after_in_child=_defaults_in_child)


def exit_status(status: int) -> int:
    """A command's exit status: 128 + the signal's number in place of Ctrl-C's 130 when one of `SIGNALS` stopped it."""
    return 128 + _received if status == INTERRUPTED and _received is not None else status


def said(message: str) -> str:
    """What a command says when it was stopped, naming the signal when it was not Ctrl-C: "interrupted by SIGTERM"."""
    return message if _received is None else message.replace("interrupted", f"interrupted by {_received.name}", 1)


def stopped_by() -> str:
    """What stopped the command: "Ctrl-C", or the signal's name ("SIGTERM")."""
    return "Ctrl-C" if _received is None else _received.name
