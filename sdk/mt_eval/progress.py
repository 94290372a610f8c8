"""Progress of a run: a rich bar on a terminal (done/total, rate, ETA, errors), plain lines elsewhere — one
every ``interval_s`` and one at the end with the time it took."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from mt_eval.background_threads import BackgroundThread, signals_held
from mt_eval.durations import format_duration


class RunProgress:
    """Call `advance` for each final result; `close` when the run ends or is interrupted."""

    def __init__(self, total: int, done: int = 0, *, label: str = "translating", stream: TextIO | None = None,
                 quiet: bool = False, interval_s: float = 5.0) -> None:
        self.total = total
        self.done = done
        self._resumed_from = done
        self.errors = 0
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self.label = label
        self._started = time.monotonic()
        self._last_line = self._started
        self._bar: Any = None
        self._task: Any = None
        if not quiet and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TextColumn("ETA"), TimeRemainingColumn(),
                                 TextColumn("[red]{task.fields[errors]}"),
                                 console=Console(file=self.stream), transient=False)
            self._task = self._bar.add_task(label, total=total, completed=done, rate="", errors="")
            with signals_held():  # (its refresh thread is not to take Ctrl-C from the main thread)
                self._bar.start()

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.errors += failed
        if self.quiet:
            return
        now = time.monotonic()
        rate = (self.done - self._resumed_from) / max(now - self._started, 1e-9)
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=_rate(rate),
                             errors=_errors(self.errors) if self.errors else "")
        elif self.done == self.total:
            self._line(f"{self.done}/{self.total} in {format_duration(now - self._started)} ({_rate(rate)}), "
                       f"{_errors(self.errors)}")
        elif now - self._last_line >= self.interval_s:
            self._last_line = now
            left = (self.total - self.done) / rate if rate > 0 else 0.0
            self._line(f"{self.done}/{self.total} ({_rate(rate)}, about {format_duration(left)} left, "
                       f"{_errors(self.errors)})")

    def _line(self, text: str) -> None:
        self.stream.write(f"{self.label}: {text}\n")
        self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _rate(per_second: float) -> str:
    """``134/s``, ``4.5/s``, ``0.25/s``: three significant figures at most."""
    return f"{per_second:,.0f}/s" if per_second >= 100 else f"{per_second:.3g}/s"


def _errors(count: int) -> str:
    return f"{count} error{'s' if count != 1 else ''}"


@contextmanager
def still_working(message: str, *, every_s: float = 10.0, stream: TextIO | None = None) -> Iterator[None]:
    """Say ``message`` (formatted with ``{seconds}``) on stderr each ``every_s`` while the block runs: work that
    cannot show progress (importing a plugin's code) is never silent for long."""
    import threading

    done = threading.Event()
    started = time.monotonic()

    def remind() -> None:
        while not done.wait(every_s):
            print(message.format(seconds=f"{time.monotonic() - started:.0f}"), file=stream or sys.stderr, flush=True)

    reminder = BackgroundThread(target=remind, name="mt-eval-still-working", daemon=True)
    reminder.start()
    try:
        yield
    finally:
        done.set()
