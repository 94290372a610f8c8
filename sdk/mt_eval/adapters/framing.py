"""How records are delimited on a translator program's stdin and stdout.

A *record* is what the program reads and answers in one go. Both directions use the same terminator:
the program reads a record up to the terminator and answers with its translation followed by the
terminator, in order. Two framings cover most programs:

- `NULL_FLUSH`: records end with a NUL byte, the convention of programs with a ``-z``/null-flush mode
  (Apertium's, lttoolbox's, CG-3's). A source may contain newlines; it may not contain NUL.
- `LINES`: one line a record, for line-oriented programs that flush after every line. A source that
  contains newlines is sent as several records, one per line, and the answers are joined with ``\\n``,
  so it survives the round trip line for line.

A persistent program's answers are matched to records in order, so an ``aligned`` framing proves which
record each answer belongs to: after every record it sends a *marker* record, ``⟦NONCE:SEQ⟧``, which the
program echoes (translated or not, such tokens pass through translators, as champollion's placeholder
sentinels do). The answers between two markers belong to one record; one answer is the translation, and
any other count — a warning printed on stdout, a line skipped — fails that record alone, never shifting a
translation onto the next one; a marker sent as the program starts (``SEQ`` 0) sets apart the banner it may
print first. `LINES` is aligned: a line program can print anything on its stdout.
`NULL_FLUSH` is not: in null-flush mode the NUL is a flush command, answered exactly once per record.
A program that does not pass markers through times out; run it with one process per batch
(``persistent=False``), where answers are counted over the whole output instead.

Texts go to the program in the framing's ``encoding`` (UTF-8 unless declared: ``LINES.with_encoding("latin-1")``)
and its answers are read back in it. An answer that is not valid in it fails its own entry with the byte, where it
is, and the fix — never a text of U+FFFD replacement characters; a text the encoding cannot write fails before it is
sent. The encoding must write ASCII as ASCII (Latin-1, cp1252, Shift_JIS, EUC-KR do; UTF-16 does not), for the
terminators and markers are ASCII bytes; a marker's brackets become ``[…]`` where ``⟦…⟧`` cannot be written.
"""

from __future__ import annotations

import codecs
import dataclasses
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mt_eval.lone_surrogates import not_valid_unicode


class FramingError(ValueError):
    """A text cannot be sent in this framing; the message says why (it becomes the entry's error)."""


@dataclass(frozen=True)
class Framing:
    """Records end with ``terminator`` in both directions; ``per_line`` sends each line of a text as a record;
    ``aligned`` sends a marker after each record to a persistent program; ``encoding`` is what the program reads
    and writes (see the module docstring)."""

    name: str
    terminator: bytes
    per_line: bool = False
    aligned: bool = True
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        if not self.terminator:
            raise ValueError("a framing needs a non-empty terminator")
        if self.per_line and self.terminator != b"\n":
            raise ValueError("per_line framing uses the newline as its terminator")
        _check_encoding(self.encoding)

    def with_encoding(self, encoding: str) -> Framing:
        """This framing for a program that reads and writes ``encoding`` (a Python codec name: "latin-1", "cp1252")."""
        return dataclasses.replace(self, encoding=encoding)

    def records(self, text: str) -> list[bytes]:
        """The records that carry ``text`` (without terminators); raises `FramingError`."""
        parts = text.split("\n") if self.per_line else [text]
        encoded = []
        position = 0  # where the part starts in the text
        for part in parts:
            try:
                encoded.append(part.encode(self.encoding))
            except UnicodeEncodeError as exc:
                raise FramingError(self._cannot_write(text, position + exc.start)) from exc
            position += len(part) + 1
        for record in encoded:
            if self.terminator in record:
                shown = self.terminator.decode("utf-8", "backslashreplace").encode("unicode_escape").decode()
                raise FramingError(f'the text contains "{shown}", which ends a record in {self.name} framing')
        return encoded

    def answer_to(self, record: bytes, answer: bytes) -> bytes:
        """``answer`` as the translation of ``record``: a line program that ends its lines with CRLF (a Windows
        build) answers "hola\\r", whose \\r is the line's end, not the text's — unless the record ended so too."""
        if self.per_line and answer.endswith(b"\r") and not record.endswith(b"\r"):
            return answer[:-1]
        return answer

    def join(self, answers: Sequence[bytes], program: str = "the program") -> str:
        """One text from the answers to `records`; raises `FramingError` for an answer not valid in the encoding,
        saying what ``program`` wrote and the fix."""
        texts = []
        for number, answer in enumerate(answers, 1):
            try:
                texts.append(answer.decode(self.encoding))
            except UnicodeDecodeError as exc:
                which = f"its answer to line {number} of the text" if len(answers) > 1 else "its answer"
                raise FramingError(self._cannot_read(program, which, answer, exc.start)) from exc
        return "\n".join(texts)

    def _cannot_write(self, text: str, position: int) -> str:
        character = text[position]
        if 0xD800 <= ord(character) <= 0xDFFF:
            return not_valid_unicode("the text", position)
        return (f'the text contains "{character}" (U+{ord(character):04X}) at position {position}, which '
                f"{self.encoding}, the encoding the program reads, cannot write")

    def _cannot_read(self, program: str, which: str, answer: bytes, start: int) -> str:
        shown = answer[max(0, start - 40):start + 40].decode(self.encoding, "backslashreplace")
        if codecs.lookup(self.encoding).name == "utf-8":
            encoding, fix = "UTF-8", ("make it write UTF-8 (PYTHONIOENCODING=utf-8 in its environment for a Python "
                                      "program, LC_ALL=C.UTF-8 for most others)")
        else:
            encoding, fix = self.encoding, f"make it write {self.encoding} (PYTHONIOENCODING={self.encoding} for a " \
                                           "Python program)"
        constant = "LINES" if self == LINES.with_encoding(self.encoding) else \
            "NULL_FLUSH" if self == NULL_FLUSH.with_encoding(self.encoding) else "framing"
        return (f"{program} wrote an answer that is not valid {encoding}: byte 0x{answer[start]:02X} at byte "
                f"{start} of {which} ('{shown}'). Fix: {fix}, or declare the encoding it writes: "
                f"ProcessTranslator(..., framing={constant}.with_encoding(ITS_ENCODING)), such as \"cp1252\"; README: "
                '"Wrapping a translator program"')

    def split_output(self, data: bytes, expected: int) -> list[bytes] | None:
        """The answers in a whole output (batch mode), or None when there are not ``expected`` of them.

        A missing final terminator is tolerated, and so are empty records after the expected ones (programs
        in null-flush mode often flush once more at the end of their input) — but not empty lines (``per_line``):
        a text ending in a newline has an empty last line, whose empty answer a banner line would otherwise
        push out of place.
        """
        parts = self._answers(data, expected)
        return parts if len(parts) == expected else None

    def count_answers(self, data: bytes) -> int:
        """How many answers a whole output holds, as `split_output` counts them (empty ones at its end aside)."""
        return len(self._answers(data, 0))

    def _answers(self, data: bytes, expected: int) -> list[bytes]:
        parts = data.split(self.terminator)
        if parts and parts[-1] == b"":
            parts.pop()
        while len(parts) > expected and parts[-1] == b"" and not self.per_line:
            parts.pop()
        return parts


def _check_encoding(encoding: str) -> None:
    """Raise ValueError for an encoding that is unknown, or that does not write ASCII as ASCII."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f'unknown encoding "{encoding}": give a Python codec name ("utf-8", "latin-1", '
                         '"cp1252", "shift_jis")') from None
    ascii_text = "\0\n\r:[]0123456789"
    if ascii_text.encode(encoding, "replace") != ascii_text.encode("ascii"):
        raise ValueError(f"{encoding} does not write ASCII as ASCII, so records cannot be framed by their "
                         "terminator bytes: make the program read and write UTF-8 (or another encoding that does, "
                         "such as latin-1)")


class Markers:
    """The marker records of one program: ``⟦NONCE:SEQ⟧`` (``[NONCE:SEQ]`` in an encoding that cannot write the
    brackets), recognised even when the program re-spaced or re-cased them, as long as its digits survive."""

    def __init__(self, nonce: int | None = None, encoding: str = "utf-8") -> None:
        self.nonce = nonce if nonce is not None else random.randrange(100_000, 1_000_000)
        self._pattern = re.compile(rb"%d\D{0,3}?(\d{1,12})" % self.nonce)
        self.encoding = encoding
        try:
            "\u27e6\u27e7".encode(encoding)
            self._brackets = "\u27e6\u27e7"
        except UnicodeEncodeError:
            self._brackets = "[]"

    def shown(self, seq: str) -> str:
        """The marker numbered ``seq``, as a text (for a message)."""
        return f"{self._brackets[0]}{self.nonce}:{seq}{self._brackets[1]}"

    def marker(self, seq: int) -> bytes:
        return self.shown(str(seq)).encode(self.encoding)

    def seq_in(self, answer: bytes) -> int | None:
        """The sequence number of the marker ``answer`` echoes, or None when it is an answer."""
        if len(answer) > 64:
            return None
        found = self._pattern.search(answer)
        return int(found.group(1)) if found else None


NULL_FLUSH = Framing("null-flush", b"\0", aligned=False)
LINES = Framing("line", b"\n", per_line=True)
