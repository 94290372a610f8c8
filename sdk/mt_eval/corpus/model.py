"""What a corpus is once read, the names its columns and fields may have, and the error a bad one raises.

Entries are the dicts a method receives: ``id`` (always a string: the bridge protocol's ids are strings),
``source``, ``reference`` when the corpus has references, and every other field as the file gives it.
An integer id keeps its type in `Corpus.given_ids`, so the run card can list it as the file wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.problems import Problem, ProblemsError

ROLES = ("id", "source", "reference")
SOURCE_ALIASES = ("src", "original", "source_text")
REFERENCE_ALIASES = ("target", "translation", "ref", "tgt", "target_text")
ALIASES = {"source": SOURCE_ALIASES, "reference": REFERENCE_ALIASES}
ROLE_OF_NAME = {"id": "id", "source": "source", "reference": "reference",
                **{name: "source" for name in SOURCE_ALIASES}, **{name: "reference" for name in REFERENCE_ALIASES}}

FORMAT_NAMES = {"json": "JSON", "jsonl": "JSONL", "tsv": "TSV", "parallel": "parallel text"}


@dataclass
class Column:
    """One TSV column: where it is, what the header called it, and the entry field it fills."""

    index: int  # 0-based
    key: str  # the entry field: "id", "source", "reference" or the extra column's own name
    header: str | None = None  # the header cell, when the file has a header

    @property
    def role(self) -> str:
        return self.key if self.key in ROLES else "extra"


@dataclass
class CorpusFile:
    """A file a corpus was read from (parallel text has two)."""

    role: str  # "corpus", "source" or "reference"
    path: Path
    sha256: str
    lines: int | None = None


@dataclass
class Corpus:
    """A corpus read and checked: its entries and everything needed to say how they were read."""

    path: Path
    name: str
    sha256: str
    entries: Sequence[dict[str, Any]]  # a list, or `mt_eval.corpus.on_disk.EntriesOnDisk` for a large JSONL file
    format: str = "json"  # json | jsonl | tsv | parallel
    source_lang: str | None = None
    target_lang: str | None = None
    license: str | None = None
    dataset: dict[str, Any] = field(default_factory=dict)
    references: bool = False  # every entry has a reference (checked: all or none)
    ids_from: str = "field"  # field | line numbers | positions
    given_ids: dict[str, int] = field(default_factory=dict)  # id text -> the integer the file gave
    lines: list[int] | None = None  # the line of each entry (TSV, JSONL, parallel text)
    entries_at: str = "$"  # JSON: where the entries list is ("$" or "$.entries")
    columns: list[Column] | None = None  # TSV
    columns_from: str | None = None  # TSV: header | convention | --columns
    header_line: int | None = None
    comment_lines: list[int] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # alias field/header -> the field it was read as
    field_names: set[str] = field(default_factory=set)  # every field an entry has, or every column's (TSV)
    files: list[CorpusFile] = field(default_factory=list)
    accepted_doubts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def pair(self) -> str | None:
        if self.source_lang and self.target_lang:
            return f"{self.source_lang}>{self.target_lang}"
        return None

    @property
    def has_references(self) -> bool:  # the name callers used before ``references``
        return self.references

    def where(self, index: int) -> str:
        """Where entry ``index`` is in the file: ``line 12`` or ``$.entries[3]``."""
        if self.lines is not None:
            return f"line {self.lines[index]}"
        return f"{self.entries_at}[{index}]"

    def field_place(self, name: str) -> str:
        """Where the field ``name`` first is: ``$[3]`` or ``line 12``, or its TSV column (``column 3 of the header
        on line 1``)."""
        if self.columns is not None:
            index = next(c.index for c in self.columns if c.key == name)
            named_by = {"header": f" of the header on line {self.header_line}", "--columns": " of --columns"}
            return f"column {index + 1}{named_by.get(self.columns_from or '', '')}"
        return self.where(next(i for i, e in enumerate(self.entries) if isinstance(e, dict) and name in e))

    def given_id(self, text: str) -> str | int:
        """The id as the file wrote it (an integer stays an integer)."""
        return self.given_ids.get(text, text)


class CorpusError(ProblemsError):
    """The corpus cannot be used; ``problems`` says where and why. One problem reads as one line."""

    @classmethod
    def single(cls, file: str | Path, message: str, *, hint: str | None = None, where: str = "$",
               code: str = "invalid") -> CorpusError:
        return cls([Problem(file=str(file), path=where, message=message, hint=hint, code=code)])

    def __str__(self) -> str:
        if len(self.problems) == 1 and self.problems[0].severity == "error":
            problem = self.problems[0]
            place = problem.file if problem.path == "$" else f"{problem.file} {problem.path}"
            return f"corpus {place}: {problem.message}" + (f"; {problem.hint}" if problem.hint else "")
        return super().__str__()


def entry_key(entry_id: object) -> str:
    """The text an id is matched by everywhere (results, resume, selections, compare): ``7`` and ``"7"`` agree."""
    return entry_id if isinstance(entry_id, str) else str(entry_id)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def type_name(value: Any) -> str:
    """What a JSON value is, in words: ``a list``, ``a string``, ``null``…"""
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", float: "a number",
            int: "an integer", type(None): "null"}.get(type(value), type(value).__name__)


def listing(items: list[Any], limit: int = 10) -> str:
    """``1, 4, 9`` or ``1, 4, 9, … and 12 more``."""
    shown = ", ".join(str(item) for item in items[:limit])
    return shown if len(items) <= limit else f"{shown}, … and {len(items) - limit:,} more"
