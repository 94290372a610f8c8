"""What ``mt-eval translate`` writes to standard output: one line per line of its input, each printed as soon as it
and the lines before it are done (`InOrderPrinter`), as text (`result_line`) or as JSON."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mt_eval.records import TranslationResult


class InOrderPrinter:
    """Prints each line's result as soon as it and every line before it are done (the output is line N for input
    line N, and what was printed stays printed if the command is stopped), to standard output as it was before a
    method's prints were diverted (`mt_eval.guarded_calls.prints_to_stderr`). A write that fails (a full disk, a
    reader gone) is kept in ``error``, ``on_error`` is called, and nothing more is printed."""

    def __init__(self, as_json: bool, corpus_ids: dict[int, str]) -> None:
        self.as_json = as_json
        self.corpus_ids = corpus_ids  # line number → the id its corpus gives it (--json shows it)
        self.printed = 0
        self.failed = 0
        self.error: OSError | None = None
        self.on_error: Callable[[], None] = lambda: None
        self._waiting: dict[int, TranslationResult] = {}
        self._out = copy_of_stdout()
        self._terminal = self._out.isatty()  # (a method's control characters are shown escaped, not obeyed)

    def done(self, result: TranslationResult) -> None:
        self._waiting[int(result.id)] = result
        self.failed += result.error is not None
        ready: list[TranslationResult] = []
        while (self.printed + len(ready) + 1) in self._waiting:
            ready.append(self._waiting.pop(self.printed + len(ready) + 1))
        if not ready or self.error is not None:
            return
        if self.as_json:
            import msgspec

            text = "".join(msgspec.json.encode(msgspec.structs.replace(r, id=self.corpus_ids.get(int(r.id), r.id)))
                           .decode() + "\n" for r in ready)
        else:
            text = "".join(result_line(r) + "\n" for r in ready)
        if self._terminal:
            from mt_eval.control_chars import output_for_terminal

            text = output_for_terminal(text, as_json=self.as_json)
        try:
            self._out.write(text)
            self._out.flush()
        except OSError as exc:
            self.error = exc
            self.on_error()
            return
        self.printed += len(ready)

    def close(self) -> None:
        if self._out is not sys.stdout:
            with contextlib.suppress(OSError):
                self._out.close()


def copy_of_stdout() -> TextIO:
    """Standard output, written to through a copy of fd 1 (which a method's prints are diverted from); sys.stdout
    itself when it is no file (a test's capture, which the diversion leaves alone)."""
    try:
        fd = os.dup(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return sys.stdout
    return open(fd, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=True)


def result_line(result: object) -> str:
    """A result as its one line (line breaks in it as spaces, as in a run's predictions.txt, so output line N is
    input line N): the translation as the method gave it, or why there is none, with the control and invisible
    characters of the method's message escaped (as run lists a method's errors)."""
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.harness.corpus import one_line

    error, predicted = getattr(result, "error", None), getattr(result, "predicted", None)
    if error is not None:
        return escaped_for_terminal(one_line(f"[error] {error}"))
    if getattr(result, "abstained", False):
        reason = getattr(result, "abstain_reason", None) or "the method declined this sentence"
        return escaped_for_terminal(one_line(f"[declined] {reason}"))
    return one_line(str(predicted))
