"""The corpus side of the harness: for ``mt-eval run``, the corpus its arguments name, read by
`mt_eval.corpus`, doubts settled once the pair is known, the selection, the card's results under the
corpus's own ids, and ``predictions.txt``; for ``verify`` and ``compare``, the corpus a card was run on,
read the way the card records.

(`read_corpus`, `Corpus` and `CorpusError` are re-exported: the readers live in `mt_eval.corpus`.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, cast

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.corpus.describe import summary_line
from mt_eval.corpus.doubts import find_doubts, settle_doubts
from mt_eval.corpus.model import Corpus, CorpusError
from mt_eval.corpus.reader import CorpusSpec, load_corpus, read_corpus
from mt_eval.corpus.selection import Selection, SelectionRequest, select
from mt_eval.harness.logged_results import LoggedResults, pairs
from mt_eval.harness.run_directory import RunError, write_json
from mt_eval.harness.runcard import CardResult, RunCard
from mt_eval.records import TranslationResult

__all__ = ["Corpus", "CorpusError", "CorpusSpec", "card_corpus_spec", "card_results", "predictions_problem",
           "read_corpus", "read_run_corpus", "settle_run_corpus", "write_predictions", "write_run_outputs"]


def read_run_corpus(spec: CorpusSpec) -> Corpus:
    """The corpus of a run (``--corpus``, or ``--source-file``/``--reference-file``), read and checked once."""
    return load_corpus(spec)


def settle_run_corpus(spec: CorpusSpec, corpus: Corpus, pair: str, request: SelectionRequest, *, quiet: bool
                      ) -> Selection:
    """Refuse a doubtful corpus (now that the pair is known), say how it is read, and select the entries."""
    settle_doubts(corpus, find_doubts(corpus, pair), spec.accept)
    selection = select(corpus, request)
    for warning in corpus.warnings:
        named = escaped_for_terminal(str(corpus.path), one_line=True)  # (a name's ESC, or line break, not obeyed)
        print(f"warning: corpus {named}: {escaped_for_terminal(warning)}", file=sys.stderr)
    if not quiet:
        print(summary_line(corpus, selection.entries), file=sys.stderr)
    return selection


def card_results(corpus: Corpus, results: list[TranslationResult]) -> list[CardResult]:
    """The results under the ids the corpus gave (an integer id stays an integer in the card)."""
    given = corpus.given_ids
    if not given:  # every id is text: the results are already what the card holds (CardResult only widens id)
        return cast("list[CardResult]", results)
    names = TranslationResult.__struct_fields__
    out = []
    for result in results:
        fields = {name: getattr(result, name) for name in names}
        fields["id"] = given.get(result.id, result.id)
        out.append(CardResult(**fields))
    return out


def one_line(text: str) -> str:
    """``text`` with its line breaks (CRLF, LF, CR) as spaces: one entry's line in a file of one per line."""
    if "\n" in text or "\r" in text:
        return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return text


def _prediction_lines(entries: Sequence[dict[str, Any]], results: Mapping[str, TranslationResult] | LoggedResults
                      ) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Each entry with its line of ``predictions.txt`` (`write_predictions`), newline and all."""
    for entry, result in pairs(entries, results):
        text = "" if result is None or result.error is not None or result.predicted is None else result.predicted
        yield entry, one_line(text) + "\n"


def write_predictions(path: Path, entries: Sequence[dict[str, Any]],
                      results: Mapping[str, TranslationResult] | LoggedResults) -> None:
    """One prediction per line in corpus order, the shape parallel-text tools read. A failed entry is an empty
    line; line breaks inside a prediction become spaces (the card and results.jsonl keep them)."""
    temporary = path.with_suffix(".tmp")
    try:
        with temporary.open("w", encoding="utf-8") as file:
            lines = []
            for _entry, line in _prediction_lines(entries, results):
                lines.append(line)
                if len(lines) == 4_096:
                    file.write("".join(lines))
                    lines.clear()
            file.write("".join(lines))
        temporary.replace(path)
    except BaseException:  # (a full disk, Ctrl-C: no part of a file left behind)
        temporary.unlink(missing_ok=True)
        raise


def predictions_problem(path: Path, entries: Sequence[dict[str, Any]],
                        results: Mapping[str, TranslationResult] | LoggedResults) -> str | None:
    """How ``path`` differs from the ``predictions.txt`` that `write_predictions` makes of ``results``; None when it
    is that file, byte for byte."""
    try:
        with path.open("rb") as file:
            number = 0
            for number, (entry, line) in enumerate(_prediction_lines(entries, results), 1):
                found = file.readline()
                if not found:
                    return f"it ends after line {number - 1}, where the run has {len(entries):,} entries"
                if found != line.encode("utf-8"):
                    return f"line {number} is not the prediction of entry {entry['id']}"
            if file.read(1):
                return f"it goes on after line {number}, the last of the run's {len(entries):,} entries"
    except OSError as exc:
        return f"it cannot be read: {exc.strerror or exc}"
    return None


def write_run_outputs(out: Path, card: RunCard, entries: Sequence[dict[str, Any]], results: LoggedResults) -> Path:
    """``card.json`` and ``predictions.txt`` in the run directory ``out``, each whole or not at all; one that cannot
    be written (a full disk) stops the run saying that its results are kept and how to write it. Returns the
    card's path."""
    card_path, predictions_path = out / "card.json", out / "predictions.txt"
    for path, write in ((card_path, partial(write_json, card_path, card)),
                        (predictions_path, partial(write_predictions, predictions_path, entries, results))):
        try:
            write()
        except OSError as exc:
            raise RunError(f"cannot write {path}: {exc.strerror or exc}. Every entry translated is saved in "
                           f"{out / 'results.jsonl'}: free space, or make the directory writable, then run the same "
                           "command with --resume (in place of --force, where it has it) to write it") from exc
    return card_path


def card_corpus_spec(card: RunCard, card_path: str | Path, given: CorpusSpec | str | Path | None = None
                     ) -> CorpusSpec:
    """The corpus ``card`` was run on, read as the card records (its ``--columns`` and accepted doubts).

    ``given`` (``--corpus`` or ``--source-file``/``--reference-file``) replaces the files, not how they are
    read. Otherwise the recorded paths are used as written, or relative to the card's directory."""
    reading = card.corpus.reading
    columns = reading.columns if reading is not None and reading.columns_from == "--columns" else None
    accept = list(reading.accepted_doubts) if reading is not None else []
    if isinstance(given, (str, Path)):
        given = CorpusSpec(path=Path(given))
    if given is not None:
        tsv = given.path is not None and given.path.name.lower().removesuffix(".gz").endswith(".tsv")
        return CorpusSpec(path=given.path, source_file=given.source_file, reference_file=given.reference_file,
                          columns=given.columns if given.columns is not None or not tsv else columns,
                          accept=given.accept or accept)
    if reading is not None and reading.format == "parallel":
        reference = next((f.path for f in reading.files if f.role == "reference"), None)
        return CorpusSpec(source_file=_beside(card_path, card.corpus.path),
                          reference_file=None if reference is None else _beside(card_path, reference), accept=accept)
    return CorpusSpec(path=_beside(card_path, card.corpus.path), columns=columns, accept=accept)


def _beside(card_path: str | Path, recorded: str) -> Path:
    """A recorded path as written; when it does not exist there, relative to the card's directory, or to the two
    above it (a run writes ``runs/NAME/card.json`` in the directory it started in, which the path is relative to).
    The corpus's sha256 is checked either way."""
    path = Path(recorded)
    if path.exists() or path.is_absolute():
        return path
    card_directory = Path(card_path).parent
    for up in ("", "..", "../.."):  # (not Path.parent, which stops at "." for a card given as runs/NAME/card.json)
        base = Path(os.path.normpath(card_directory / up))
        if (base / path).exists():
            return base / path
    return path
