"""The texts of a corpus the check compares against: each entry's source and reference(s).

The corpus is read with the harness's public `read_corpus`; only each entry's ``id``, ``source`` and
``reference`` (or a ``references`` list) are used, so any format `read_corpus` accepts works here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SIDES = ("source", "reference")


@dataclass
class CorpusTexts:
    """One corpus as the check sees it: ``texts`` are ``(entry id, side, text)``."""

    path: Path
    name: str
    sha256: str
    entries: int
    texts: list[tuple[str, str, str]]


class CorpusUnreadable(Exception):
    """A corpus could not be read; the message says where and why."""


def load_corpus(path: str | Path) -> CorpusTexts:
    """Read ``path`` with the harness's corpus reader and keep the texts the check needs."""
    from mt_eval.harness.corpus import read_corpus
    from mt_eval.problems import ProblemsError

    try:
        corpus = read_corpus(path)
    except ProblemsError as exc:
        raise CorpusUnreadable(str(exc)) from exc
    texts: list[tuple[str, str, str]] = []
    for entry in corpus.entries:
        entry_id = str(entry["id"])
        if isinstance(entry.get("source"), str):
            texts.append((entry_id, "source", entry["source"]))
        references = entry.get("references")
        if isinstance(entry.get("reference"), str):
            texts.append((entry_id, "reference", entry["reference"]))
        elif isinstance(references, list):
            texts.extend((entry_id, "reference", r) for r in references if isinstance(r, str))
    return CorpusTexts(path=Path(path), name=Path(path).name, sha256=corpus.sha256, entries=len(corpus.entries),
                       texts=texts)
