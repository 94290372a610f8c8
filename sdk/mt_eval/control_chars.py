"""Control characters in names that are printed on terminals and published on boards.

A terminal obeys ESC and its friends, PostgreSQL refuses NUL, and a tab or line break breaks a table's row,
so names that are shown (a corpus's, a method's, a board's columns) are refused with the first one named;
text written before such names were refused is shown with them escaped. Characters that are not seen but act on
what is read (U+202E turns the text after it around) are kept in what is stored and escaped where a terminal shows
them (`escaped_for_terminal`)."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROLS_BUT_NEWLINE = r"\x00-\x09\x0b-\x1f\x7f-\x9f"  # (a regular expression's class)
_CONTROL_BUT_NEWLINE = re.compile(f"[{_CONTROLS_BUT_NEWLINE}]")
# Unicode's format characters that are not seen (a regular expression's class): the soft hyphen, the bidirectional
# marks, embeddings, overrides and isolates, zero-width spaces, the byte-order mark, the line and paragraph
# separators, interlinear annotations and tags. The joiners (U+200C, U+200D) are not among them: words of Persian
# and Indic scripts, and emoji, are written with them; nor are the signs that span Arabic numbers, which are seen.
INVISIBLE = ("\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
             "\U000e0001\U000e0020-\U000e007f")
_UNSEEN = re.compile(f"[{_CONTROLS_BUT_NEWLINE}{INVISIBLE}]")
_UNSEEN_ON_ONE_LINE = re.compile(f"[\\n{_CONTROLS_BUT_NEWLINE}{INVISIBLE}]")
_UNSEEN_BUT_LAYOUT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")  # (line breaks and tabs kept)


def first_control(text: str) -> str | None:
    """The first control character of ``text`` as ``U+001B`` (C0, DEL and C1; tabs and line breaks too), or None."""
    found = _CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def escaped_controls(text: str, *, one_line: bool = False) -> str:
    r"""``text`` with every control character but the line break written as its escape (ESC → ``\x1b``); the line
    break too when it is ``one_line`` (an id, whose message would otherwise be cut in two)."""
    pattern = _CONTROL if one_line else _CONTROL_BUT_NEWLINE
    return pattern.sub(_escape, text)


def escaped_for_terminal(text: str, *, one_line: bool = False) -> str:
    r"""``text`` as a terminal may be given it: every control character but the line break, and every invisible
    format character (`INVISIBLE`), written as its escape (``\x1b``, ``\u202e``), so that none acts on the terminal
    or turns around what is read after it; the line break too when it is ``one_line`` (a command line to copy)."""
    return (_UNSEEN_ON_ONE_LINE if one_line else _UNSEEN).sub(_escape, text)


def output_for_terminal(text: str, *, as_json: bool = False) -> str:
    r"""A command's output ``text`` (a method's translations) as a terminal may be given it: as
    `escaped_for_terminal`, but with line breaks and tabs kept, as they lay the output out; in JSON text, each as
    a JSON escape (``\u001b``, ``\u202e``), so that it is still the same JSON. Output piped or redirected is
    written as it is: only what a terminal shows is escaped."""
    return _UNSEEN_BUT_LAYOUT.sub(_json_escape if as_json else _escape, text)


def _escape(found: re.Match[str]) -> str:
    return found.group().encode("unicode_escape").decode()


def _json_escape(found: re.Match[str]) -> str:
    units = found.group().encode("utf-16-be")  # (one unit, or a surrogate pair beyond U+FFFF)
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
