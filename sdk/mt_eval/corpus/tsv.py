"""TSV by the MT convention (sacreBLEU, OPUS, Tatoeba): ``source<TAB>reference``, one segment per line.

- Lines are split on TAB and nothing else: there is no quoting, so a quote is text like any other.
- A line that is ``#`` or starts with ``# `` is a comment; ``#hashtag`` is text. Blank lines are skipped.
- A first line made of column names (``source``, ``reference``, ``id``, their aliases such as ``src`` and
  ``tgt``, plus any other names for extra columns) is a header and gives each column its field. The
  project's own ``id<TAB>source<TAB>reference`` form is read this way.
- Without a header, column 1 is the source and column 2 the reference; further columns are kept as
  ``column3``, ``column4``… ; ids are line numbers. ``--columns`` names the columns instead.
- A row with more columns than the header (or than most rows) has a TAB inside a text: refused.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import repeat
from pathlib import Path
from typing import Any, cast

from mt_eval.corpus.files import FileText, display_name, split_lines
from mt_eval.corpus.model import ROLE_OF_NAME, SOURCE_ALIASES, Column, Corpus, CorpusError, CorpusFile, listing
from mt_eval.corpus.names import misspelling_of
from mt_eval.problems import Problem

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,39}")
# Columns typed with spaces instead of a TAB (not the two spaces some type after a full stop)
SPACED_COLUMNS = re.compile(r"\S {3,}\S|[^\s.!?:;] {2}\S")
MAX_ROW_PROBLEMS = 20


def read_tsv(file: FileText, *, columns: list[str] | None = None) -> Corpus:
    """Read a TSV corpus; ``columns`` (from ``--columns``) names the columns instead of a header."""
    rows: list[tuple[int, str]] = []
    comments: list[int] = []
    for number, line in enumerate(split_lines(file.text), start=1):
        if _comment(line):
            comments.append(number)
        elif line and not line.isspace():
            rows.append((number, line))
    corpus = Corpus(path=file.path, name=display_name(file.path), sha256=file.sha256, entries=[], format="tsv",
                    lines=[], comment_lines=comments,
                    files=[CorpusFile(role="corpus", path=file.path, sha256=file.sha256)])
    header = header_cells(rows[0][1]) if rows else None
    if header is not None:
        corpus.header_line = rows[0][0]
        rows = rows[1:]
    if columns is not None:
        corpus.columns, corpus.aliases = named_columns(columns, file.path, "--columns")
        corpus.columns_from = "--columns"
    elif header is not None:
        corpus.columns, corpus.aliases = named_columns(header, file.path, f"the header (line {corpus.header_line})")
        for column, name in zip(corpus.columns, header, strict=True):
            column.header = name.strip()
        corpus.columns_from = "header"
    else:
        width = _usual_width(rows)
        if width == 1 and any("\t" in line for _, line in rows):
            width = 2  # some rows have a reference column: the reference rule will name those without
        corpus.columns = [Column(0, "source"), Column(1, "reference"),
                          *(Column(i, f"column{i + 1}") for i in range(2, width))][:max(width, 1)]
        corpus.columns_from = "convention"
    corpus.field_names = {c.key for c in corpus.columns}
    _fill(corpus, rows)
    return corpus


def first_row(text: str) -> tuple[int, str] | None:
    """The first line that is neither blank nor a comment, with its number (what `read_tsv` reads first)."""
    for number, line in enumerate(split_lines(text[:1 << 16]), start=1):  # a first row is in the first 64 KiB
        if not _comment(line) and line and not line.isspace():
            return number, line
    return None


def named_columns(names: list[str], path: Path, origin: str) -> tuple[list[Column], dict[str, str]]:
    """Columns from names (a header or ``--columns``): roles by name or alias, the rest extra fields."""
    cleaned = [name.strip() for name in names]
    if origin == "--columns" and "" in cleaned:  # ("source," would make the references an extra field, unscored)
        where = cleaned.index("")
        raise CorpusError.single(path, f"--columns {','.join(names)!r} leaves column {where + 1} without a name",
                                 code="columns", hint="name every column (e.g. source,reference), and no comma at "
                                 "either end")
    by_role: dict[str, list[int]] = {}
    for index, name in enumerate(cleaned):
        role = ROLE_OF_NAME.get(name.lower())
        if role is not None:
            by_role.setdefault(role, []).append(index)
    columns = [Column(i, name or f"column{i + 1}") for i, name in enumerate(cleaned)]
    aliases: dict[str, str] = {}
    for role, indexes in by_role.items():
        canonical = [i for i in indexes if cleaned[i].lower() == role]
        if len(canonical) > 1 or (not canonical and len(indexes) > 1):
            named = " and ".join(f'"{cleaned[i]}" (column {i + 1})' for i in (canonical or indexes))
            raise CorpusError.single(path, f"{origin} names two {role} columns: {named}", code="columns",
                                     hint=f"keep one column named {role}, or rename the other")
        chosen = canonical[0] if canonical else indexes[0]
        columns[chosen].key = role
        if cleaned[chosen] != role:
            aliases[cleaned[chosen]] = role
    keys = [c.key for c in columns]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise CorpusError.single(path, f'{origin} names two columns "{repeated[0]}"', code="columns",
                                 hint="give every column its own name")
    if "source" not in by_role:
        meant = [f'did you mean "{role}"? (column {i + 1} is "{name}")' for i, name in enumerate(cleaned)
                 if (role := misspelling_of(name, ROLE_OF_NAME)) in ("source", *SOURCE_ALIASES)]
        raise CorpusError.single(path, f"{origin} names no source column (it names {', '.join(cleaned)})",
                                 code="columns", hint=meant[0] if meant else
                                 "name the column holding the text to translate source")
    return columns, aliases


def header_cells(line: str) -> list[str] | None:
    """The line's cells when they are column names: two roles at least (or a lone source column), and
    every other cell a plain name; empty cells at its end are unnamed columns (a spreadsheet that saves every line
    with a trailing TAB)."""
    cells = line.split("\t")
    names = named_part([cell.strip() for cell in cells])
    roles = [ROLE_OF_NAME.get(name.lower()) for name in names]
    known = sum(role is not None for role in roles)
    named = known >= 2 or (len(names) == 1 and roles[0] == "source")
    if named and all(role is not None or NAME.fullmatch(name) for role, name in zip(roles, names, strict=True)):
        return cells
    return None


def named_part(cells: list[str]) -> list[str]:
    """``cells`` without the empty ones at their end."""
    end = len(cells)
    while end > 1 and not cells[end - 1]:
        end -= 1
    return cells[:end]


def _comment(line: str) -> bool:
    return line[:1] == "#" and (len(line) == 1 or line[1] == " ")


def _usual_width(rows: list[tuple[int, str]]) -> int:
    """How many columns most rows have (the wider count on a tie)."""
    counts = Counter(map(str.count, [line for _, line in rows], repeat("\t")))
    if not counts:
        return 2
    return max(counts.items(), key=lambda item: (item[1], item[0]))[0] + 1


# An empty cell in one of these columns means the entry has no such field: no reference; a scored entry (no
# family), without a pass rule or a pair of its own, as the rows of a mixed file of families are.
OPTIONAL_CELLS = ("reference", "family", "pass_rule", "pair")


def _fill(corpus: Corpus, rows: list[tuple[int, str]]) -> None:
    """Entries from rows; an empty cell of an `OPTIONAL_CELLS` column means no such field."""
    assert corpus.columns is not None and corpus.lines is not None
    keys = [c.key for c in corpus.columns]
    corpus.ids_from = "field" if "id" in keys else "line numbers"
    if keys in (["source", "reference"], ["source"]):
        wide = _fill_source_reference(cast("list[dict[str, Any]]", corpus.entries), corpus.lines, rows, len(keys))
    else:
        unnamed = [c.key for c in corpus.columns if c.header == ""]  # (a header's trailing TABs: no field when empty)
        wide = _fill_columns(cast("list[dict[str, Any]]", corpus.entries), corpus.lines, rows, keys,
                             [*OPTIONAL_CELLS, *unnamed])
    if wide:
        raise CorpusError(_wide_rows(corpus, wide, len(rows)),
                          summary=f"corpus {corpus.path} has rows with too many columns")


def _fill_source_reference(entries: list[dict[str, Any]], lines: list[int], rows: list[tuple[int, str]],
                           width: int) -> list[tuple[int, int]]:
    """The MT convention's two columns (the common case, twice as fast as `_fill_columns`)."""
    wide = []
    append, number_of = entries.append, lines.append
    for number, line in rows:
        cells = line.split("\t")
        count = len(cells)
        if count == 1:
            append({"id": str(number), "source": cells[0]})
        elif count == 2 and width == 2:
            source, reference = cells
            append({"id": str(number), "source": source, "reference": reference} if reference
                   else {"id": str(number), "source": source})
        else:
            wide.append((number, count))
            continue
        number_of(number)
    return wide


def _fill_columns(entries: list[dict[str, Any]], lines: list[int], rows: list[tuple[int, str]], keys: list[str],
                  optional_cells: list[str]) -> list[tuple[int, int]]:
    width = len(keys)
    ids_given = "id" in keys
    optional = [(keys.index(key), key) for key in optional_cells if key in keys]
    wide = []
    for number, line in rows:
        cells = line.split("\t")
        if len(cells) > width:
            wide.append((number, len(cells)))
            continue
        if ids_given:
            entry = dict(zip(keys, cells, strict=False))
        else:
            entry = {"id": str(number)}
            entry.update(zip(keys, cells, strict=False))
        for index, key in optional:
            if index < len(cells) and not cells[index]:
                del entry[key]
        entries.append(entry)
        lines.append(number)
    return wide


def _wide_rows(corpus: Corpus, wide: list[tuple[int, int]], rows: int) -> list[Problem]:
    """The rows wider than the columns named; when every row is (two or more), and equally so, the names are short:
    one problem."""
    width = len(corpus.columns or [])
    than = {"header": "the header names", "--columns": "--columns names"}.get(corpus.columns_from or "",
                                                                              "most lines have")
    counts = {count for _, count in wide}
    if len(wide) == rows > 1 and len(counts) == 1 and corpus.columns_from in ("header", "--columns"):
        count, names = counts.pop(), [c.header or c.key for c in corpus.columns or []]
        names += [f"column{i + 1}" for i in range(width, count)]
        hint = (f"name all {count} columns, in order: --columns {','.join(names)}" if corpus.columns_from ==
                "--columns" else f"name all {count} columns in the header (line {corpus.header_line})")
        return [Problem(file=str(corpus.path), path="$", code="columns", hint=hint,
                        message=f"every row has {count} columns, but {than} {width}")]
    hint = ("a text contains a TAB: TSV has no quoting, so a TAB always starts a new column; remove the TAB, "
            "name the extra columns in a header, or use JSONL for such text")
    problems = [Problem(file=str(corpus.path), path=f"line {number}", code="columns", hint=hint,
                        message=f"{count} columns, but {than} {width}") for number, count in wide[:MAX_ROW_PROBLEMS]]
    if len(wide) > MAX_ROW_PROBLEMS:
        rest = [number for number, _ in wide[MAX_ROW_PROBLEMS:]]
        problems.append(Problem(file=str(corpus.path), path="$", code="columns",
                                message=f"also lines {listing(rest)}"))
    return problems
