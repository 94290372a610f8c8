"""What the first line of a .tsv file says when the file is not the TSV it seems: JSON or JSONL, CSV, markup
(a WMT SGML or XML test set, TMX, XLIFF), or a header mt-eval would read as an entry (a column name misspelled,
or one it does not know).

Each is a doubt (`mt_eval.corpus.doubts`), settled before the lines are split on TAB: the rules of TSV fail on
such a file in ways that say nothing of what it is, or, worse, read it (JSONL as one column of JSON text to
translate, a header as the first entry).
"""

from __future__ import annotations

import msgspec

from mt_eval.corpus.doubts import Doubt, json_kind, markup_doubt
from mt_eval.corpus.model import ROLE_OF_NAME
from mt_eval.corpus.names import misspelling_of
from mt_eval.corpus.tsv import NAME, first_row, header_cells, named_part

_decode = msgspec.json.Decoder().decode
_COLUMNS = "source, reference and id (or their aliases, such as src and tgt)"


def first_line_doubts(text: str) -> list[Doubt]:
    """The doubts the first line (neither blank nor a comment) of a .tsv file's ``text`` raises."""
    row = first_row(text)
    if row is None:
        return []
    number, line = row
    doubt = _json(text, number, line) or _csv(number, line) or markup_doubt(number, line) or _header(number, line)
    return [doubt] if doubt is not None else []


def _json(text: str, number: int, line: str) -> Doubt | None:
    """JSONL (an object on the line) or JSON (the whole text is one value) named .tsv."""
    if line.lstrip()[:1] not in ("{", "["):
        return None
    if json_kind(line) == "jsonl":
        return Doubt("json-in-tsv", f"line {number} looks like JSON (an entry object, as in JSONL), not TSV: each "
                                    "line would be translated as one source text, braces and all",
                     "name the file .jsonl (one entry object per line)")
    try:
        whole = _decode(text)
    except msgspec.DecodeError:
        return None
    if not isinstance(whole, list | dict):
        return None
    what = "a list of entries" if isinstance(whole, list) else "an object"
    return Doubt("json-in-tsv", f"the file looks like JSON ({what}), not TSV: each line would be translated as one "
                                "source text",
                 "name the file .json")


def _csv(number: int, line: str) -> Doubt | None:
    """A CSV header (``id,source,reference``) on a line without TAB."""
    if "\t" in line:
        return None
    for separator in (",", ";"):
        cells = [cell.strip().strip('"').strip().lower() for cell in line.split(separator)]
        if len(cells) >= 2 and sum(cell in ROLE_OF_NAME for cell in cells) >= 2:
            return Doubt("csv-in-tsv", f"line {number} looks like a CSV header ({line.strip()[:60]}): the .tsv reader "
                                       "splits lines on TAB only, so each whole line would be one source text",
                         "save it as TSV (one TAB between columns, no quotes) or JSONL; CSV is not read, its quoting "
                         "differing between programs")
    return None


def _header(number: int, line: str) -> Doubt | None:
    """Column names that `mt_eval.corpus.tsv.header_cells` does not take for a header, so that the line would
    be the first entry: one known name (``source``, written as such) beside a misspelled one (``refrence``) or
    unknown ones (``domain``)."""
    if header_cells(line) is not None:
        return None
    cells = named_part([cell.strip() for cell in line.split("\t")])  # (a trailing TAB names no column)
    if len(cells) < 2 or not all(NAME.fullmatch(cell) for cell in cells):
        return None
    known = [cell for cell in cells if cell.lower() in ROLE_OF_NAME]
    meant = {cell: misspelling_of(cell, ROLE_OF_NAME) for cell in cells if cell.lower() not in ROLE_OF_NAME}
    misspelled = {cell: role for cell, role in meant.items() if role is not None}
    if not known or not (misspelled or any(cell == cell.lower() for cell in known)):
        return None  # ("Source<TAB>Fuente" is a text: a header is written source<TAB>reference)
    shown = "<TAB>".join(cells)
    if misspelled:
        names = " and ".join(f'"{cell}"' for cell in misspelled)
        return Doubt("header-like-first-line",
                     f"line {number} looks like a header ({shown}), but is read as the first entry: {names} "
                     f"{'is not a column name' if len(misspelled) == 1 else 'are not column names'} mt-eval knows",
                     " and ".join(f'did you mean "{role}"?' for role in misspelled.values()) + " correct the header")
    unknown = " and ".join(f'"{cell}"' for cell in meant)
    return Doubt("header-like-first-line",
                 f"line {number} looks like a header ({shown}), but is read as the first entry: a header names at "
                 f"least two of {_COLUMNS}, and {unknown} {'is' if len(meant) == 1 else 'are'} none of them",
                 "if it is a header, name the columns source<TAB>reference (other names are extra fields), or "
                 "delete the line and give --columns")
