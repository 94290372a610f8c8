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
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from mt_eval.lone_surrogates import not_valid_unicode


class FramingError(ValueError):
    """A text cannot be sent in this framing; the message says why (it becomes the entry's error)."""


@dataclass(frozen=True)
class Framing:
    """Records end with ``terminator`` in both directions; ``per_line`` sends each line of a text as a record;
    ``aligned`` sends a marker after each record to a persistent program (see the module docstring)."""

    name: str
    terminator: bytes
    per_line: bool = False
    aligned: bool = True

    def __post_init__(self) -> None:
        if not self.terminator:
            raise ValueError("a framing needs a non-empty terminator")
        if self.per_line and self.terminator != b"\n":
            raise ValueError("per_line framing uses the newline as its terminator")

    def records(self, text: str) -> list[bytes]:
        """The records that carry ``text`` (without terminators); raises `FramingError`."""
        parts = text.split("\n") if self.per_line else [text]
        try:
            encoded = [part.encode("utf-8") for part in parts]
        except UnicodeEncodeError as exc:
            raise FramingError(not_valid_unicode("the text", exc.start)) from exc
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

    def join(self, answers: list[bytes]) -> str:
        """One text from the answers to `records` (undecodable bytes become U+FFFD)."""
        return "\n".join(answer.decode("utf-8", "replace") for answer in answers)

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


class Markers:
    """The marker records of one program: ``⟦NONCE:SEQ⟧``, recognised even when the program re-spaced or
    re-cased them, as long as its digits survive."""

    def __init__(self, nonce: int | None = None) -> None:
        self.nonce = nonce if nonce is not None else random.randrange(100_000, 1_000_000)
        self._pattern = re.compile(rb"%d\D{0,3}?(\d{1,12})" % self.nonce)

    def marker(self, seq: int) -> bytes:
        return f"\u27e6{self.nonce}:{seq}\u27e7".encode()

    def seq_in(self, answer: bytes) -> int | None:
        """The sequence number of the marker ``answer`` echoes, or None when it is an answer."""
        if len(answer) > 64:
            return None
        found = self._pattern.search(answer)
        return int(found.group(1)) if found else None


NULL_FLUSH = Framing("null-flush", b"\0", aligned=False)
LINES = Framing("line", b"\n", per_line=True)
