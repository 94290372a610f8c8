"""What a child process writes to stderr, as the host shows it: `StderrTail` keeps the last of it and forwards its
lines to a logger; `stderr_lines`, `telling_lines` and `last_lines` pick the lines that tell a method's author what
went wrong (`mt_eval.child_process.ChildProcess` feeds one `StderrTail` per child)."""

from __future__ import annotations

import codecs
import functools
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
        text = self._text_from(max(0, len(self._data) - self.max_bytes))
        return "\n".join(text.splitlines()[-self.max_lines:])

    def since(self, mark: int) -> str:
        """What arrived after ``mark`` (an earlier value of `total`), as far as the kept bytes reach back; of a
        character cut at its start, nothing, not U+FFFD."""
        kept = min(self.total - mark, len(self._data))
        return self._text_from(len(self._data) - kept) if kept > 0 else ""

    def _text_from(self, start: int) -> str:
        """The kept bytes from ``start`` on, as text from the first character that begins there or after (only the
        bytes read are copied: `since` is called for every record of a program restarted on what it writes)."""
        reach = start if _utf8(self.encoding) or not _multi_byte(self.encoding) else max(0, start - _REACH)
        return _decoded(bytes(self._data[reach:]), start - reach, self.encoding,
                        whole=reach == 0 and self.total == len(self._data))


# A byte below 0x40 is a character of its own in the multi-byte encodings a program may declare (Shift_JIS, EUC-JP,
# EUC-KR, GBK, Big5: the bytes of a character after its first are 0x40 or above): characters are known to begin there.
_SINGLE_BYTE_CHARACTER = re.compile(rb"[\x00-\x3f]")
_REACH = 1024  # bytes read again before a cut, at most, to find where characters begin


def _decoded(data: bytes, start: int, encoding: str, *, whole: bool) -> str:
    """``data[start:]`` (bytes a child wrote; ``whole``: all of them, from its first), as text without the bytes at
    its start of a character cut before them: no U+FFFD, nor the other characters they would read as in Shift_JIS or
    GBK. In UTF-8 a character's bytes after its first are 0x80 to 0xBF; in a multi-byte encoding, where characters
    begin is found by reading from the last byte before ``start`` that is a character of its own."""
    if _utf8(encoding):
        cut = len(data[start:start + 3]) - len(data[start:start + 3].lstrip(bytes(range(0x80, 0xC0))))
        return data[start + cut:].decode("utf-8", "replace")
    if not _multi_byte(encoding):
        return data[start:].decode(encoding, "replace")
    reach = max(0, start - _REACH)
    sync = max((m.start() for m in _SINGLE_BYTE_CHARACTER.finditer(data, reach, start)),
               default=0 if whole and reach == 0 else None)
    if sync is None:  # nothing before it tells where characters begin: from the first byte after it that does
        ahead = _SINGLE_BYTE_CHARACTER.search(data, start)
        return data[ahead.start() if ahead else start:].decode(encoding, "replace")
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    decoder.decode(data[sync:start])
    cut_in_two = bool(decoder.getstate()[0])
    text = decoder.decode(data[start:], final=True)
    return text[1:] if cut_in_two else text


@functools.cache
def _utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


@functools.cache
def _multi_byte(encoding: str) -> bool:
    """Whether some characters of ``encoding`` are written in more than one byte (a byte starts one)."""
    return any(codecs.getincrementaldecoder(encoding)("replace").decode(bytes([byte])) == ""
               for byte in range(0x80, 0x100))


# Node's own hint after a warning or an uncaught error (``(Use `node --trace-warnings ...` to show where the warning
# was created)``): a command line for `node`, which a guest's author does not type; host-failures.js drops it too.
_NODE_TRACE_HINT = re.compile(r"\(Use `node --trace-[a-z-]+ \.\.\.` to show where the \w+ was \w+\)")


# The Node guest's report of a call it answered as failed, each line with the kit's name: its message (one line or
# more) and the stack frames indented under it. That call's own error says it, and it explains nothing that happens
# later (a crash after it would quote the kit's frames).
_CALL_FAILED = re.compile(r"mt-eval-guest: (translate|decide) failed: ")
_KIT_LINE = "mt-eval-guest: "
_KIT_FRAME = re.compile(r"mt-eval-guest: \s")


def stderr_lines(text: str) -> list[str]:
    """A child's non-blank stderr lines, without Node's hint of how to trace a warning, nor the Node guest's report
    of a call it answered as failed (`_CALL_FAILED`, `_report_end`)."""
    lines = text.splitlines()
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if _CALL_FAILED.match(line):
            index = _report_end(lines, index)
            continue
        if line.strip() and not _NODE_TRACE_HINT.fullmatch(line.strip()):
            kept.append(line)
        index += 1
    return kept


def _report_end(lines: list[str], start: int) -> int:
    """Where the report of a failed call that begins at ``start`` ends: after the further lines of its message and the
    stack frames under them. A kit line after the frames is not part of it, and further lines without frames after
    them (a thrown string) are left in, as they cannot be told from the kit's other lines."""
    end = start + 1
    for index in range(start + 1, len(lines)):
        if not lines[index].startswith(_KIT_LINE):
            break
        if _KIT_FRAME.match(lines[index]):
            end = index + 1
        elif end > start + 1:  # (after its frames: another line of the kit's)
            break
    return end


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
