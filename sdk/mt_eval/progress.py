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
            self._bar = _bar(label, total, self.stream)
        if self._bar is not None:
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


_SHORTEST_LABEL = 8  # (a label is shortened to this, with "…", before the bar gives way to lines)


def _bar_room(total: int) -> int:
    """What a bar's line holds besides its label and the bar, at its widest: the count (``12345/12345``), the rate
    (``12,345/s``), ``ETA`` and the time left (``10:00:00``), the errors (``12345 errors``), a space between each."""
    digits = len(str(total))
    return (2 * digits + 1) + 8 + len("ETA") + 8 + (digits + len(" errors")) + 6


def _bar(label: str, total: int, stream: TextIO) -> Any:
    """A rich bar on the terminal ``stream`` whose count, rate, time left and errors are never cut short: on a
    narrow terminal (or beside a long label) the bar and then the label give way (shortened with "…"); None when
    the terminal is too narrow for even that (``COLUMNS=20``): plain lines are printed instead, which it wraps."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Column

    console = Console(file=stream)
    room = console.width - _bar_room(total)
    if room < min(len(label), _SHORTEST_LABEL):
        return None

    def whole(text: str) -> TextColumn:
        return TextColumn(text, table_column=Column(no_wrap=True))

    return Progress(TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis",
                                                                          max_width=room)),
                    BarColumn(), MofNCompleteColumn(table_column=Column(no_wrap=True)), whole("{task.fields[rate]}"),
                    whole("ETA"), TimeRemainingColumn(table_column=Column(no_wrap=True)),
                    whole("[red]{task.fields[errors]}"), console=console, transient=False)


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


class LineInPlace:
    """A line of progress rewritten in place on a terminal (``\\r``), one line each elsewhere (``quiet``: none), its
    control and invisible characters escaped. A line wider than the terminal is written whole, on a row of its own:
    rewritten in place, it had wrapped, and left its first rows behind each time (a 150-character "still waiting"
    line on an 80-column terminal)."""

    def __init__(self, stream: TextIO, *, quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self.open_line = False

    def show(self, line: str, *, last: bool) -> None:
        """``line`` in place of the one before (``last``: ended, the next starts below it)."""
        from mt_eval.control_chars import escaped_for_terminal

        if self.quiet:
            return
        line = escaped_for_terminal(line)
        if self.tty and fits_in_a_row(line, self.stream):
            self.stream.write(f"\r{line}\x1b[K" + ("\n" if last else ""))
            self.open_line = not last
        else:  # (on a terminal, over the short line open before it)
            self.stream.write(("\r\x1b[K" if self.open_line else "") + line + "\n")
            self.open_line = False
        self.stream.flush()

    def say(self, line: str) -> None:
        """A line between the others, in their place until the next one."""
        self.show(line, last=False)

    def close(self) -> None:
        if self.open_line:
            self.stream.write("\n")
            self.open_line = False


def fits_in_a_row(line: str, stream: TextIO) -> bool:
    """Whether ``line`` fits in a row of the terminal ``stream`` (as wide as $COLUMNS says, else as it is, else 80
    columns), the cursor after it still in that row."""
    import os

    from rich.cells import cell_len

    width = os.environ.get("COLUMNS", "")
    if not width.isdigit() or not int(width):
        try:
            width = str(os.get_terminal_size(stream.fileno()).columns or 80)
        except (AttributeError, ValueError, OSError):  # (not a file: io.UnsupportedOperation is an OSError)
            width = "80"
    return cell_len(line) < int(width)
