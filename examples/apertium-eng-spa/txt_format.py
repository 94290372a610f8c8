"""Apertium's plain-text deformatter and reformatter (apertium-destxt, apertium-retxt), one text at a time.

``apertium -u eng-spa`` runs ``apertium-destxt | <mode pipeline> | apertium-retxt``. The two format programs
cannot be driven record by record: apertium-destxt drops NUL bytes (so a null-flush record never ends)
and only writes its output when its input ends. These functions do exactly what the two programs of
Apertium 3.8 do with a whole text (they are generated from ``txt-format.xml`` by ``deformat.xsl`` and
``reformat.xsl``); the tests compare them with the real programs on thousands of random texts. One
difference is unreachable in practice: a blank run over 8,192 characters, which apertium-destxt parks in
a temporary file (``[@/tmp/…]``) for apertium-retxt to read back, stays inline here.

deformat:
- ``[ ] \\ / @ < > ^ $ { }`` are escaped with a backslash;
- runs of blanks (space, tab, CR, LF and ``~``) other than a single space become superblanks ``[...]``;
- a blank run containing an empty line (``\\n\\n`` or ``\\r\\n\\r\\n``), and the end of the text, are sentence
  ends: ``.[]`` is written before the blank (the tagger and the transfer see a full stop there);
- NUL characters are dropped (they end the blank run before them).

reformat: superblank brackets and the inserted ``.[]`` are removed, escapes are undone, NULs dropped.
"""

from __future__ import annotations

import re

ESCAPED = frozenset("[]\\/@<>^${}")
BLANKS = frozenset(" \n\t\r~")
_SENTENCE_END = re.compile(r"(?:\n\n|\r\n\r\n)+")


def deformat(text: str) -> str:
    """What ``apertium-destxt`` writes for ``text``."""
    out: list[str] = []
    blank: list[str] = []
    sentence_end = False

    def flush() -> None:
        nonlocal sentence_end
        if sentence_end:
            out.append(".[]")
            sentence_end = False
        if blank:
            run = "".join(blank)
            blank.clear()
            out.append(run if run == " " else f"[{run}]")

    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char in "\n\r" and (match := _SENTENCE_END.match(text, index)):
            sentence_end = True
            blank.append(match.group())
            index = match.end()
            continue
        if char in BLANKS:
            blank.append(char)
        elif char in ESCAPED:
            flush()
            out.append("\\" + char)
        elif char == "\0":
            flush()
        else:
            flush()
            out.append(char)
        index += 1
    sentence_end = True
    flush()
    return "".join(out)


def reformat(text: str) -> str:
    """What ``apertium-retxt`` writes for ``text`` (a pipeline's output for one deformatted text)."""
    out: list[str] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char in "[]\0":
            index += 1
        elif char == "." and text.startswith(".[]", index):
            index += 3
        elif char == "\\" and index + 1 < size and text[index + 1] in ESCAPED:
            out.append(text[index + 1])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)
