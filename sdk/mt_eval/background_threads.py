"""Threads that leave the process's signals to the main thread.

Python runs a signal's handler in the main thread only, but the kernel may deliver a signal sent to the process
(Ctrl-C, SIGTERM) to any thread that does not block it. One delivered to another thread only marks the handler
as due: a main thread sleeping in a system call (a method's ``time.sleep`` that blocks the event loop) is not
woken, so the handler — and `mt_eval.loop_watchdog`'s Ctrl-C, which interrupts such a call — waited for the call
to end. The threads mt-eval starts (`BackgroundThread`; the event loop's executor, with
`block_process_signals` as its initializer; a library's, such as the progress bar's refresh, started within
`signals_held`) block those signals, so the kernel gives them to the main thread.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Signals sent to the process as a whole, whose handlers mt-eval (or Python, or the event loop) installs; the
# signals a thread raises for itself (a fault, an abort) are left alone.
PROCESS_SIGNALS = frozenset(getattr(signal, name) for name in (
    "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGCHLD", "SIGWINCH")
    if hasattr(signal, name))


def block_process_signals() -> None:
    """Block `PROCESS_SIGNALS` in the calling thread (not the main thread's business: call it in another one)."""
    if hasattr(signal, "pthread_sigmask"):  # (not on Windows, where signals are not delivered to threads)
        signal.pthread_sigmask(signal.SIG_BLOCK, PROCESS_SIGNALS)


class BackgroundThread(threading.Thread):
    """A `threading.Thread` that blocks `PROCESS_SIGNALS` before it runs its target."""

    def run(self) -> None:
        block_process_signals()
        super().run()


@contextmanager
def signals_held() -> Iterator[None]:
    """`PROCESS_SIGNALS` blocked in the calling thread for the block: a thread started in it (by a library that
    gives no way to run code in it first) inherits the mask. One that comes meanwhile is delivered at the end."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, PROCESS_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
