"""How records are delimited on a translator program's stdin and stdout.

A *record* is what the program reads and answers in one go. Both directions use the same terminator:
the program reads a record up to the terminator and answers with its translation followed by the
terminator, in order. Two framings cover most programs:

- `NULL_FLUSH`: records end with a NUL byte, the convention of programs with a ``-z``/null-flush mode
  (Apertium's, lttoolbox's, CG-3's). A source may contain newlines; it may not contain NUL.
- `LINES`: one line a record, for line-oriented programs that flush after every line. A source that
  contains newlines is sent as several records, one per line, and the answers are joined with ``\\n``,
  so it survives the round trip line for line.
"""

from __future__ import annotations

from dataclasses import dataclass


class FramingError(ValueError):
    """A text cannot be sent in this framing; the message says why (it becomes the entry's error)."""


@dataclass(frozen=True)
class Framing:
    """Records end with ``terminator`` in both directions; ``per_line`` sends each line of a text as a record."""

    name: str
    terminator: bytes
    per_line: bool = False

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
            raise FramingError(f"the text is not valid Unicode ({exc.reason} at position {exc.start})") from exc
        for record in encoded:
            if self.terminator in record:
                shown = self.terminator.decode("utf-8", "backslashreplace").encode("unicode_escape").decode()
                raise FramingError(f'the text contains "{shown}", which ends a record in {self.name} framing')
        return encoded

    def join(self, answers: list[bytes]) -> str:
        """One text from the answers to `records` (undecodable bytes become U+FFFD)."""
        return "\n".join(answer.decode("utf-8", "replace") for answer in answers)

    def split_output(self, data: bytes, expected: int) -> list[bytes] | None:
        """The answers in a whole output (batch mode), or None when there are not ``expected`` of them.

        A missing final terminator is tolerated, and so are empty records after the expected ones (programs
        in null-flush mode often flush once more at the end of their input).
        """
        parts = data.split(self.terminator)
        if parts and parts[-1] == b"":
            parts.pop()
        while len(parts) > expected and parts[-1] == b"":
            parts.pop()
        return parts if len(parts) == expected else None


NULL_FLUSH = Framing("null-flush", b"\0")
LINES = Framing("line", b"\n", per_line=True)
