"""The texts of a corpus the check compares against: each entry's source and its gold texts.

A corpus file is read with the corpus reader's public `read_corpus` (every format and alias it accepts
works here); `mt-eval run` hands over the corpus it has already read, so a corpus read with ``--columns``,
accepted doubts or as parallel text is checked as the run read it. Gold texts are ``reference``,
``references`` and whatever the corpus's ``dataset.gold_fields`` lists: all are the "reference" side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


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


def load_corpus(source: str | Path | Any) -> CorpusTexts:
    """Read a corpus file, or the `mt_eval.corpus.CorpusSpec` the shared corpus flags describe, with the
    corpus reader, and keep the texts the check needs."""
    from mt_eval.corpus import read_corpus
    from mt_eval.problems import ProblemsError

    path = source if isinstance(source, str | Path) else (source.path or source.source_file)
    try:
        corpus = read_corpus(source)
    except ProblemsError as exc:
        raise CorpusUnreadable(str(exc)) from exc
    except OSError as exc:
        raise CorpusUnreadable(f"cannot read corpus {path}: {exc.strerror or exc}") from exc
    return texts_of(corpus)


def texts_of(corpus: Any) -> CorpusTexts:
    """The texts of a corpus already read (a `mt_eval.corpus.Corpus`)."""
    from mt_eval.gold import corpus_gold_fields

    try:
        gold = sorted(corpus_gold_fields(corpus.dataset))
    except ValueError as exc:
        raise CorpusUnreadable(f"{corpus.path}: {exc}") from exc
    texts: list[tuple[str, str, str]] = []
    for entry in corpus.entries:
        entry_id = str(entry["id"])
        if isinstance(entry.get("source"), str):
            texts.append((entry_id, "source", entry["source"]))
        for field in gold:
            value = entry.get(field)
            values = value if isinstance(value, list) else [value]
            texts.extend((entry_id, "reference", text) for text in values if isinstance(text, str))
    return CorpusTexts(path=Path(corpus.path), name=Path(corpus.path).name, sha256=corpus.sha256,
                       entries=len(corpus.entries), texts=texts)
