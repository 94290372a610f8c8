"""Reading an evaluation corpus: upstream JSON, a flat JSON list, JSONL or TSV.

Entries keep every field they have (extra fields reach the method untouched); ``id`` and ``source``
are required, integer ids become strings, and duplicate ids are errors.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.problems import Problem, ProblemsError


@dataclass
class Corpus:
    path: Path
    name: str
    sha256: str
    entries: list[dict[str, Any]]
    source_lang: str | None = None
    target_lang: str | None = None
    license: str | None = None
    dataset: dict[str, Any] = field(default_factory=dict)

    @property
    def pair(self) -> str | None:
        if self.source_lang and self.target_lang:
            return f"{self.source_lang}>{self.target_lang}"
        return None

    @property
    def has_references(self) -> bool:
        return all(isinstance(e.get("reference"), str) for e in self.entries)


class CorpusError(ProblemsError):
    """The corpus cannot be used; ``problems`` says where and why."""


def read_corpus(path: str | Path) -> Corpus:
    """Read a corpus file, reporting every problem in it at once."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorpusError([Problem(file=str(path), path="$", message=f"cannot read corpus: {exc.strerror or exc}",
                                   code="io")], summary=f"cannot read corpus {path}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CorpusError([Problem(file=str(path), path="$", code="encoding",
                                   message=f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at line {line}",
                                   hint="convert the corpus to UTF-8 (e.g. iconv -f latin1 -t utf-8)")],
                          summary=f"cannot read corpus {path}") from exc
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        corpus = _from_tsv(path, text)
    elif suffix == ".jsonl":
        corpus = _from_jsonl(path, text)
    else:
        corpus = _from_json(path, text)
    corpus.sha256 = digest
    problems = _check_entries(path, corpus.entries)
    if problems:
        raise CorpusError(problems, summary=f"corpus {path} has {len(problems)} problem"
                                            f"{'s' if len(problems) != 1 else ''}")
    return corpus


def _from_json(path: Path, text: str) -> Corpus:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorpusError([Problem(file=str(path), path="$", code="syntax",
                                   message=f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")],
                          summary=f"cannot read corpus {path}") from exc
    if isinstance(data, list):
        return Corpus(path=path, name=path.stem, sha256="", entries=data)
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise CorpusError([Problem(file=str(path), path="$", code="shape",
                                   message="expected a list of entries, or an object with an \"entries\" list",
                                   hint='e.g. {"language_pair": {"source": "eng", "target": "spa"}, '
                                        '"entries": [{"id": "1", "source": "...", "reference": "..."}]}')],
                          summary=f"cannot read corpus {path}")
    dataset: dict[str, Any] = data["dataset"] if isinstance(data.get("dataset"), dict) else {}
    pair: dict[str, Any] = data["language_pair"] if isinstance(data.get("language_pair"), dict) else {}
    name = dataset.get("name") or dataset.get("id") or path.stem
    return Corpus(path=path, name=str(name), sha256="", entries=data["entries"],
                  source_lang=pair.get("source"), target_lang=pair.get("target"),
                  license=dataset.get("license"), dataset=dataset)


def _from_jsonl(path: Path, text: str) -> Corpus:
    entries: list[Any] = []
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(Problem(file=str(path), path=f"line {number}", code="syntax",
                                    message=f"invalid JSON at column {exc.colno}: {exc.msg}"))
    if problems:
        raise CorpusError(problems, summary=f"corpus {path} has invalid lines")
    return Corpus(path=path, name=path.stem, sha256="", entries=entries)


def _from_tsv(path: Path, text: str) -> Corpus:
    rows = [line.split("\t") for line in text.splitlines() if line.strip()]
    if rows and "source" in rows[0]:
        header, rows = rows[0], rows[1:]
    else:
        header = ["id", "source", "reference"]
    entries = []
    for number, row in enumerate(rows, start=2 if "source" in header else 1):
        if len(row) > len(header):
            raise CorpusError([Problem(file=str(path), path=f"line {number}", code="shape",
                                       message=f"{len(row)} columns, but the header has {len(header)}",
                                       hint="a field contains a tab: use the JSONL format for such text")],
                              summary=f"corpus {path} has a malformed row")
        entries.append(dict(zip(header, row, strict=False)))
    return Corpus(path=path, name=path.stem, sha256="", entries=entries)


def _check_entries(path: Path, entries: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        where = f"$.entries[{i}]"
        if not isinstance(entry, dict):
            problems.append(Problem(file=str(path), path=where, message="an entry must be an object", code="shape"))
            continue
        entry_id = entry.get("id")
        if isinstance(entry_id, int) and not isinstance(entry_id, bool):
            entry["id"] = entry_id = str(entry_id)
        if not isinstance(entry_id, str) or not entry_id:
            problems.append(Problem(file=str(path), path=f"{where}.id", code="missing",
                                    message="every entry needs an id (a string or an integer)"))
        elif entry_id in seen:
            problems.append(Problem(file=str(path), path=f"{where}.id", code="duplicate",
                                    message=f'duplicate id "{entry_id}" (first at $.entries[{seen[entry_id]}])',
                                    hint="ids must be unique: results are matched to entries by id"))
        else:
            seen[entry_id] = i
        source = entry.get("source")
        blank_allowed = entry.get("family") == "negative" and source == ""  # an empty source is a negative control
        if (not isinstance(source, str) or not source.strip()) and not blank_allowed:
            problems.append(Problem(file=str(path), path=f"{where}.source", code="missing",
                                    message="missing source text" if source is None or source == ""
                                    else f"source must be a string, got {type(source).__name__}"))
        reference = entry.get("reference")
        if reference is not None and not isinstance(reference, str):
            problems.append(Problem(file=str(path), path=f"{where}.reference", code="type",
                                    message=f"reference must be a string, got {type(reference).__name__}"))
        if len(problems) >= 50:
            problems.append(Problem(file=str(path), path="$", message="stopped after 50 problems", code="many"))
            break
    return problems
