"""The limit on importing and building a Python entry in ``mt-eval validate``'s own process (``--no-sandbox``, and the
same step inside the sandbox): a plugin whose import never ends (a server that never answers, ``time.sleep``) fails
validation after ``--start-timeout`` instead of holding the command for ever.

The import runs in the main thread, as in a run (a plugin may set signal handlers as it is imported). When the limit
passes, a watcher thread sends the main thread SIGALRM, whose handler raises `StartOverran` right where the plugin's
code is (a blocking system call is interrupted; pure Python stops at its next instruction), again each second if the
code swallows it. Code blocked in C that never comes back to Python ends the process `HARD_S` later, with exit status
1 and a line saying why: nothing is left behind to keep the command alive. Outside the main thread (and on Windows)
there is no limit.
"""

from __future__ import annotations

import contextlib
import linecache
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from mt_eval.background_threads import BackgroundThread
from mt_eval.process_exit import real_exit

HARD_S = 5.0  # after the limit, how long the interrupt may take to come through before the process ends
AGAIN_S = 1.0  # how often the interrupt is sent again while the code swallows it


class StartOverran(BaseException):
    """Raised in a plugin's import or constructor still running at the limit (a BaseException: its ``except
    Exception`` does not swallow it)."""


class StartLimit:
    """What `start_limit` saw: whether the limit passed (``overran``) and where the plugin's code was then."""

    def __init__(self, seconds: float, directory: Path) -> None:
        self.seconds = seconds
        self.directory = directory.resolve()
        self.overran = False
        self.where: str | None = None  # ``pipeline.py:3 (time.sleep(10**6))``
        self.done = threading.Event()

    def interrupt(self, signum: int, frame: FrameType | None) -> None:
        if self.done.is_set():
            return
        self.overran = True
        self.where = self.where or self._place(frame)
        raise StartOverran(f"still running after {self.seconds:g} s")

    def _place(self, frame: FrameType | None) -> str | None:
        """The innermost line of the plugin's own code the main thread was running."""
        while frame is not None:
            file = Path(frame.f_code.co_filename)
            if file.is_absolute() and file.resolve().is_relative_to(self.directory):
                text = linecache.getline(str(file), frame.f_lineno).strip()
                shown = f"{file.resolve().relative_to(self.directory)}:{frame.f_lineno}"
                return f"{shown} ({text})" if text else shown
            frame = frame.f_back
        return None


@contextlib.contextmanager
def start_limit(seconds: float, directory: Path, *, hard_message: str) -> Iterator[StartLimit]:
    """Interrupt the block with `StartOverran` once it has run ``seconds`` (see the module docstring); past that
    and `HARD_S` more, ``hard_message`` is written to stderr and the process ends with exit status 1."""
    limit = StartLimit(seconds, directory)
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_kill"):
        yield limit  # (no limit off the main thread, nor where threads cannot be signalled: Windows)
        return
    main = threading.main_thread().ident
    previous = signal.signal(signal.SIGALRM, limit.interrupt)

    def watch() -> None:
        if limit.done.wait(seconds):
            return
        waited = 0.0
        while waited < HARD_S:
            if main is not None:
                signal.pthread_kill(main, signal.SIGALRM)
            if limit.done.wait(AGAIN_S):
                return
            waited += AGAIN_S
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(hard_message + "\n")
            sys.stderr.flush()
        real_exit(1)

    watcher = BackgroundThread(target=watch, name="mt-eval start limit", daemon=True)
    watcher.start()
    try:
        yield limit
    finally:
        limit.done.set()
        watcher.join()
        signal.signal(signal.SIGALRM, previous)
