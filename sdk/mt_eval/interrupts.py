"""Holding Ctrl-C back for the moment a step must not be cut in two: `held` lets a block that is quick and must
finish whole — a commit and the record of what it committed — finish, then raises the `KeyboardInterrupt` that
came meanwhile, so the caller knows both that it was interrupted and what had been done."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def held() -> Iterator[None]:
    """SIGINT waits until the block ends, then interrupts as it would have (only in the main thread, where
    Python handles signals; elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def remember(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)

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
