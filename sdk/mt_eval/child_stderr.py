"""What a child process writes to stderr, as the host shows it: `StderrTail` keeps the last of it and forwards its
lines to a logger; `stderr_lines`, `telling_lines` and `last_lines` pick the lines that tell a method's author what
went wrong (`mt_eval.child_process.ChildProcess` feeds one `StderrTail` per child)."""

from __future__ import annotations

import codecs
import logging
import re

STDERR_LINE = "child_stderr_line"  # the attribute of a `StderrTail` log record that holds the line itself


class StderrTail:
    """Keeps the last bytes a child wrote to stderr and forwards complete lines to a logger at INFO (each record
    holds its line as ``STDERR_LINE``). ``encoding`` is what the child writes: a translator program declared to read
    and write Latin-1 writes its messages in Latin-1 too (`mt_eval.adapters.framing`)."""

    def __init__(self, logger: logging.Logger, label: str, *, max_bytes: int = 64 * 1024, max_lines: int = 40,
                 encoding: str = "utf-8") -> None:
        self.logger = logger
        self.encoding = encoding
        self.label = label
        self.max_bytes = max_bytes
        self.max_lines = max_lines
        self.total = 0  # bytes received so far: a mark for `since`
        self._data = bytearray()
        self._partial = b""

    def feed(self, data: bytes) -> None:
        self._data += data
        self.total += len(data)
        if len(self._data) > 2 * self.max_bytes:
            del self._data[:-self.max_bytes]
        if self.logger.isEnabledFor(logging.INFO):
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()[-4096:]
            for line in lines:
                text = line.decode(self.encoding, "replace")
                self.logger.info("%s: %s", self.label, text, extra={STDERR_LINE: text})

    def tail(self) -> str:
        """The last lines (bounded in bytes and in lines); of a character cut at their start, nothing, not U+FFFD."""
        text = _decoded(bytes(self._data[-self.max_bytes:]), self.encoding)
        return "\n".join(text.splitlines()[-self.max_lines:])

    def since(self, mark: int) -> str:
        """What arrived after ``mark`` (an earlier value of `total`), as far as the kept bytes reach back; of a
        character cut at its start, nothing, not U+FFFD."""
        kept = min(self.total - mark, len(self._data))
        return _decoded(bytes(self._data[len(self._data) - kept:]), self.encoding) if kept > 0 else ""


def _decoded(data: bytes, encoding: str) -> str:
    """Bytes a child wrote, as text; in UTF-8, without the bytes at their start of a character cut before them (text
    never starts with one of them: a character's bytes after its first are 0x80 to 0xBF)."""
    if codecs.lookup(encoding).name != "utf-8":
        return data.decode(encoding, "replace")
    cut = len(data[:3]) - len(data[:3].lstrip(bytes(range(0x80, 0xC0))))
    return data[cut:].decode("utf-8", "replace")


# Node's own hint after a warning or an uncaught error (``(Use `node --trace-warnings ...` to show where the warning
# was created)``): a command line for `node`, which a guest's author does not type; host-failures.js drops it too.
_NODE_TRACE_HINT = re.compile(r"\(Use `node --trace-[a-z-]+ \.\.\.` to show where the \w+ was \w+\)")


def stderr_lines(text: str) -> list[str]:
    """A child's non-blank stderr lines, without Node's hint of how to trace a warning."""
    return [line for line in text.splitlines() if line.strip() and not _NODE_TRACE_HINT.fullmatch(line.strip())]


def telling_lines(text: str, count: int = 5) -> list[str]:
    """The last ``count`` `stderr_lines` of a child; of one V8 aborted (Node out of memory), its own words
    alone (``FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory``): the garbage
    collector's figures before them and the native stack trace after them say nothing to the method's author."""
    lines = stderr_lines(text)
    fatal = [line for line in lines if line.startswith("FATAL ERROR: ")]
    return fatal[-1:] if fatal else lines[-count:]


def last_lines(text: str, count: int = 5) -> str:
    """`telling_lines` joined with " / " (for one-line error messages)."""
    return " / ".join(telling_lines(text, count))
