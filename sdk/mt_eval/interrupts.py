"""Holding Ctrl-C back for the moment a step must not be cut in two: `held` lets a block that is quick and must
finish whole — a commit and the record of what it committed — finish, then raises the `KeyboardInterrupt` that
came meanwhile, so the caller knows both that it was interrupted and what had been done. A second Ctrl-C does
not wait (a commit can hang on a server): it raises `CutShort` at once."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class CutShort(KeyboardInterrupt):
    """A second Ctrl-C came while a held block ran: it was cut short, and whether its step was done is not known."""


@contextmanager
def held() -> Iterator[None]:
    """SIGINT waits until the block ends, then interrupts as it would have (only in the main thread, where
    Python handles signals, and not where SIGINT is ignored; elsewhere the block runs as it is). A second SIGINT
    raises `CutShort` in the block at once."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        yield
        return
    came: list[int] = []

    def remember(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)
        if len(came) > 1:  # (the user will not wait: the block is left now)
            signal.signal(signal.SIGINT, previous)
            raise CutShort

    previous = signal.signal(signal.SIGINT, remember)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        if callable(previous):
            previous(signal.SIGINT, None)  # (the default handler raises KeyboardInterrupt; another does its own)
        elif previous == signal.SIG_DFL:
            raise KeyboardInterrupt
