"""Control characters in names that are printed on terminals and published on boards.

A terminal obeys ESC and its friends, PostgreSQL refuses NUL, and a tab or line break breaks a table's row,
so names that are shown (a corpus's, a method's, a board's columns) are refused with the first one named;
text written before such names were refused is shown with them escaped."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def first_control(text: str) -> str | None:
    """The first control character of ``text`` as ``U+001B`` (C0, DEL and C1; tabs and line breaks too), or None."""
    found = _CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def escaped_controls(text: str, *, one_line: bool = False) -> str:
    r"""``text`` with every control character but the line break written as its escape (ESC → ``\x1b``); the line
    break too when it is ``one_line`` (an id, whose message would otherwise be cut in two)."""
    pattern = _CONTROL if one_line else _CONTROL_BUT_NEWLINE
    return pattern.sub(lambda found: found.group().encode("unicode_escape").decode(), text)
