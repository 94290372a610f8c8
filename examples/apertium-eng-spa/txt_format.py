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

_DEFORMAT = re.compile(r"([ \n\t\r~]+)|\0+|([\[\]\\/@<>^${}])")
_REFORMAT = re.compile(r"\.\[\]|\\([\[\]\\/@<>^${}])|[\[\]\0]")


def deformat(text: str) -> str:
    """What ``apertium-destxt`` writes for ``text``."""
    size = len(text)
    ends_blank = False

    def replace(match: re.Match[str]) -> str:
        nonlocal ends_blank
        blank = match.group(1)
        if blank is not None:
            last = match.end() == size  # the end of the text is a sentence end too
            ends_blank = ends_blank or last
            sentence_end = last or "\n\n" in blank or "\r\n\r\n" in blank
            return (".[]" if sentence_end else "") + (blank if blank == " " else f"[{blank}]")
        escaped = match.group(2)
        return "" if escaped is None else "\\" + escaped  # NULs are dropped

    out = _DEFORMAT.sub(replace, text)
    return out if ends_blank else out + ".[]"


def reformat(text: str) -> str:
    """What ``apertium-retxt`` writes for ``text`` (a pipeline's output for one deformatted text)."""
    return _REFORMAT.sub(lambda match: match.group(1) or "", text)
