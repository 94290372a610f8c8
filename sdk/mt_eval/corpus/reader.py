"""The one way every command reads a corpus: `read_corpus` (or `load_corpus`, then `settle_doubts`).

A `CorpusSpec` says where the corpus is — one file (``--corpus``) or parallel text (``--source-file`` and
``--reference-file``) — and how to read it (``--columns``, ``--accept-doubt``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.corpus.checks import check_corpus
from mt_eval.corpus.doubts import Doubt, find_doubts, refuse_doubts, settle_doubts
from mt_eval.corpus.files import (
    STANDARD_INPUT,
    FileText,
    corpus_format,
    read_file,
    refuse_stray_carriage_return,
    stream_name,
)
from mt_eval.corpus.first_line import first_line_doubts
from mt_eval.corpus.jsonfile import EntryFixer, read_json, read_jsonl, read_jsonl_on_disk
from mt_eval.corpus.model import Corpus, CorpusError
from mt_eval.corpus.on_disk import EntriesOnDisk
from mt_eval.corpus.parallel import read_parallel
from mt_eval.corpus.tsv import read_tsv

_EMPTY_HINTS = {
    "tsv": "add entries, one per line as source<TAB>reference (or just the source, to translate without scoring)",
    "jsonl": 'add entries, one JSON object per line, e.g. {"id": "1", "source": "...", "reference": "..."}',
    "json": 'add entries, e.g. [{"id": "1", "source": "...", "reference": "..."}]',
}
_FORMATS_BY_CONTENT = ("a JSON list of entries (its first character [), JSON lines (one entry object per line, the "
                       "first character {) or TSV (source<TAB>reference per line)")


@dataclass
class CorpusSpec:
    """Where a corpus is and how to read it."""

    path: Path | None = None
    source_file: Path | None = None
    reference_file: Path | None = None
    columns: list[str] | None = None
    accept: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.reference_file is not None and self.source_file is None:
            raise ValueError("--reference-file needs --source-file (the sentences it translates)")
        if (self.path is None) == (self.source_file is None):
            raise ValueError("give a corpus file, or parallel text with --source-file (not both)")
        if self.columns is not None and (self.path is None or corpus_format(self.path) not in ("tsv", None)):
            raise ValueError("--columns names the columns of a .tsv corpus; this corpus has none")

    @property
    def main_path(self) -> Path:
        path = self.path or self.source_file
        assert path is not None
        return path

    def reading(self) -> dict[str, Any] | None:
        """What, besides the files' bytes, decides the entries (a resumed run must read the same way);
        None when the defaults apply."""
        if self.columns is None and not self.accept:
            return None
        return {"columns": self.columns, "accept": sorted(self.accept)}


def load_corpus(spec: CorpusSpec, already_read: FileText | None = None) -> Corpus:
    """Read and check the corpus ``spec`` names (doubts are found by `find_doubts` and settled by `settle_doubts`,
    except those about a .tsv file's first line, which decide whether it can be read as TSV at all).
    ``already_read``: the text of a file whose name gives no format, read before (a pipe can be read only once)."""
    try:
        return _load_corpus(spec, already_read)
    except RecursionError:  # (whichever reader, or check, met it first)
        raise _standard_input_named(CorpusError.single(spec.main_path, "arrays or objects nested too deeply to read; "
                                                       "a corpus is a list of flat entries", code="syntax")) from None
    except CorpusError as exc:
        named = _standard_input_named(exc)
        if named is exc:
            raise
        raise named from None


def _standard_input_named(exc: CorpusError) -> CorpusError:
    """``exc`` with a corpus read from standard input (``-``, /dev/stdin) named "standard input", as every message
    names it (`mt_eval.corpus.files.stream_name`)."""
    if not any(stream_name(Path(p.file)) == STANDARD_INPUT for p in exc.problems if p.file):
        return exc
    return CorpusError([msgspec.structs.replace(p, file=STANDARD_INPUT)
                        if p.file and stream_name(Path(p.file)) == STANDARD_INPUT else p for p in exc.problems])


def _load_corpus(spec: CorpusSpec, already_read: FileText | None) -> Corpus:
    if spec.source_file is not None:
        return read_parallel(spec.source_file, spec.reference_file)  # built from lines: nothing else to check
    path = spec.main_path
    kind = corpus_format(path)
    file = None
    if kind is None:  # (a pipe can be read only once: its text is read here, and only here)
        file = already_read or read_file(path, unnamed=True)
        kind = _format_from_content(file, spec.columns)
    corpus = read_jsonl_on_disk(path) if kind == "jsonl" and file is None else None  # a large one: on disk
    other_format: list[Doubt] = []
    if corpus is None:
        file = file or read_file(path, lines=kind == "tsv")
        if kind == "tsv":
            other_format = first_line_doubts(file.text)  # settled first: split on TABs, such a file says nothing
            refuse_doubts(path, other_format, spec.accept)
            corpus = read_tsv(file, columns=spec.columns)
        elif kind == "jsonl":
            corpus = read_jsonl(file)
        else:
            corpus = read_json(file)
    check_corpus(corpus, empty_hint=_empty_hint(corpus))
    settle_doubts(corpus, other_format, spec.accept)  # (accepted: recorded)
    if isinstance(corpus.entries, EntriesOnDisk):  # the checks noted the integer ids: from now on, ids are text
        corpus.entries.fix = EntryFixer(implicit_ids=corpus.ids_from == "line numbers", text_ids=True)
    return corpus


def _format_from_content(file: FileText, columns: list[str] | None) -> str:
    """The format of a corpus whose name gives none, from its first non-blank character: ``[`` a JSON list, ``{``
    JSON lines (or one JSON object: the upstream shape), anything else TSV."""
    text = file.text.lstrip()
    if not text:
        raise CorpusError.single(file.path, "holds only blank lines: no corpus format could be recognised",
                                 code="empty", hint=f"give a corpus: {_FORMATS_BY_CONTENT}")
    kind = "tsv"
    if text[0] == "[":
        kind = "json"
    elif text[0] == "{":
        kind = "json" if _one_json_object(text) else "jsonl"
    if kind != "tsv" and columns is not None:
        raise CorpusError.single(file.path, f"--columns names the columns of a TSV corpus, and this one holds "
                                 f"{'JSON lines' if kind == 'jsonl' else 'JSON'}", code="columns",
                                 hint="leave --columns out")
    if kind == "tsv":
        refuse_stray_carriage_return(file)
    return kind


def _one_json_object(text: str) -> bool:
    """Whether text beginning with ``{`` is one JSON object (spread over lines, or holding ``entries``) rather than
    JSON lines."""
    first_line = text.split("\n", 1)[0]
    try:
        first = msgspec.json.decode(first_line)
    except msgspec.DecodeError:
        first = None
    if isinstance(first, dict):
        return "entries" in first
    try:
        return isinstance(msgspec.json.decode(text), dict)
    except msgspec.DecodeError:  # (JSON lines whose first line is broken: their reader says where)
        return False


def read_corpus(source: CorpusSpec | str | Path, *, columns: list[str] | None = None, accept: list[str] | None = None,
                pair: str | None = None, already_read: FileText | None = None) -> Corpus:
    """Read, check and doubt-check a corpus; ``pair`` (``SRC>TGT``) enables the script check; ``already_read`` as
    for `load_corpus`."""
    spec = source if isinstance(source, CorpusSpec) else CorpusSpec(path=Path(source), columns=columns,
                                                                     accept=list(accept or []))
    corpus = load_corpus(spec, already_read)
    settle_doubts(corpus, find_doubts(corpus, pair or corpus.pair), spec.accept)
    return corpus


def _empty_hint(corpus: Corpus) -> str:
    skipped = []
    if corpus.header_line is not None:
        skipped.append(f"a header (line {corpus.header_line})")
    if corpus.comment_lines:
        skipped.append(f"{len(corpus.comment_lines)} comment line{'s' if len(corpus.comment_lines) > 1 else ''}")
    found = f"the file holds only {' and '.join(skipped)}; " if skipped else ""
    return found + _EMPTY_HINTS.get(corpus.format, "add entries")


__all__ = ["Corpus", "CorpusError", "CorpusSpec", "load_corpus", "read_corpus"]
