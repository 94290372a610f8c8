"""The contamination check from end to end: read the corpora, index them (part by part: `parts`), read
the bundle (or the other corpus), find hits, run the planted control when there are none, and add it all
up to a verdict."""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from mt_eval.contamination.control import bundle_control, corpus_control
from mt_eval.contamination.corpora import REFERENCE, SIDES, SOURCE, CorpusTexts, EntryIds, load_corpus
from mt_eval.contamination.extract import BundleReader
from mt_eval.contamination.index import CorpusIndex
from mt_eval.contamination.matching import Document, Matcher
from mt_eval.contamination.parts import CorpusParts, scan_parts
from mt_eval.contamination.render import human_size
from mt_eval.contamination.report import ControlResult, CorpusSummary, Finding, Hit, Report, verdict
from mt_eval.contamination.settings import CheckSettings
from mt_eval.corpus.model import plural
from mt_eval.lone_surrogates import writable

Progress = Callable[[str], None]


class CheckError(Exception):
    """The check cannot run (a missing bundle, an unreadable corpus); the message says how to fix it."""


def check_bundle(bundle: str | Path, corpora: Sequence[str | Path | CorpusTexts], settings: CheckSettings | None = None,
                 progress: Progress | None = None, index: CorpusParts | None = None) -> Report:
    """Check a method's bundle (a directory) against one or more corpora (or the parts `build_index` made of
    them, to check several bundles against the same corpora)."""
    settings = index.settings if index is not None else settings or CheckSettings()
    bundle = Path(bundle)
    if not bundle.is_dir():
        raise CheckError(f"{bundle} is not a directory: give the method plugin's directory")
    try:
        with os.scandir(bundle):
            pass
    except OSError as exc:
        raise CheckError(f"{writable(str(bundle))}: cannot list this directory: {exc.strerror or exc}; give the "
                         "check read permission on the method plugin's directory") from exc
    started = time.perf_counter()
    parts = index or build_index(corpora, settings, progress)
    say = progress or (lambda _message: None)
    hits, findings, files, size = scan_bundle(bundle, parts.indexes(progress), settings,
                                              lambda f, b: say(f"read {plural(f, 'file')}, {human_size(b)}"))
    control = None
    if not hits and settings.plant:
        control_index = parts.control_index()
        say(f"planted control: {min(settings.plant, control_index.units)} corpus texts into a copy of the bundle")

        def copy_read(files: int, size: int) -> None:
            say(f"read {plural(files, 'file')} of the copy, {human_size(size)}")

        control = bundle_control(bundle, control_index,
                                 lambda root: scan_bundle(root, [control_index], settings, copy_read)[0])
    return _report(str(bundle), "bundle", parts, hits, findings, control, files, size, started)


def check_corpora(against: str | Path | CorpusTexts, corpora: Sequence[str | Path | CorpusTexts],
                  settings: CheckSettings | None = None,
                  progress: Progress | None = None) -> Report:
    """Check whether corpus ``against`` (e.g. a development set) holds texts of ``corpora`` (e.g. a test set)."""
    settings = settings or CheckSettings()
    started = time.perf_counter()
    parts = build_index(corpora, settings, progress)
    other = against if isinstance(against, CorpusTexts) else _load(against)
    hits = scan_parts(parts.indexes(progress), lambda: corpus_documents(other))
    control = None
    if not hits and settings.plant:
        control_index = parts.control_index()

        def scan_texts(extra: Sequence[tuple[str, str]]) -> list[Hit]:
            labels = [label for label, _text in extra]
            pieces = [(number, text.replace("\n", "\t")) for number, (_label, text) in enumerate(extra)]
            return Matcher(control_index).scan(Document(other.name, pieces, locator="entry", entry_ids=labels,
                                                        side="source"))

        control = corpus_control(control_index, scan_texts)
    size = other.path.stat().st_size if other.path.exists() else 0
    return _report(str(other.path), "corpus", parts, hits, [], control, 1, size, started)


def scan_bundle(root: Path, indexes: Iterable[CorpusIndex], settings: CheckSettings,
                progress: Callable[[int, int], None] | None = None) -> tuple[list[Hit], list[Finding], int, int]:
    """Hits (against each index in turn, merged) and findings of a bundle directory, and how many files and
    bytes it holds. The bundle is read once per index; the findings and counts are those of the first read."""
    readers: list[BundleReader] = []

    def documents() -> Iterator[Document]:
        readers.append(BundleReader(root, settings, progress))
        return readers[-1].documents()

    hits = scan_parts(indexes, documents)
    if not readers:
        return hits, [], 0, 0
    return hits, readers[0].findings, readers[0].files, readers[0].bytes


def corpus_documents(corpus: CorpusTexts) -> Iterator[Document]:
    """A corpus as two documents, its sources and its references, one piece per text; each is read from the
    corpus's entries as it is scanned, and an entry's id is read back only for a hit."""
    for side in (SOURCE, REFERENCE):
        positions = array("q")
        yield Document(corpus.name, _side_pieces(corpus, side, positions), locator="entry",
                       entry_ids=EntryIds(corpus, positions), side=SIDES[side])  # type: ignore[arg-type]


def _side_pieces(corpus: CorpusTexts, side: int, positions: array[int]) -> Iterator[tuple[int, str]]:
    number = 0
    for position, entry in enumerate(corpus.entries):
        has_source, found = corpus.texts(entry)
        for text in (found[:has_source] if side == SOURCE else found[has_source:]):
            positions.append(position)
            yield number, text.replace("\n", "\t")
            number += 1


def build_index(corpora: Sequence[str | Path | CorpusTexts], settings: CheckSettings | None = None,
                progress: Progress | None = None) -> CorpusParts:
    """Read the corpora (files, or corpora already read: `corpora.texts_of`) and plan their index, built
    part by part as they are checked against (`CheckError` when one cannot be read)."""
    settings = settings or CheckSettings()
    if not corpora:
        raise CheckError("no corpus given: name at least one with --corpus FILE")
    loaded = [corpus if isinstance(corpus, CorpusTexts) else _load(corpus) for corpus in corpora]
    return CorpusParts(loaded, settings)


def _load(path: str | Path) -> CorpusTexts:
    from mt_eval.contamination.corpora import CorpusUnreadable

    try:
        return load_corpus(path)
    except CorpusUnreadable as exc:
        raise CheckError(str(exc)) from exc


def _report(target: str, mode: str, parts: CorpusParts, hits: list[Hit], findings: list[Finding],
            control: ControlResult | None, files: int, size: int, started: float) -> Report:
    totals = parts.totals
    status, reasons = verdict(hits, findings, control, totals.units - totals.uncheckable)
    # (a bundle's or corpus's name that is not UTF-8 is written with its escapes, as the bundle's files are)
    return Report(status=status, reasons=reasons, target=writable(target), mode=mode,  # type: ignore[arg-type]
                  corpora=[CorpusSummary(path=writable(str(c.path)), name=c.name, sha256=c.sha256,
                                         entries=len(c.entries),
                                         texts=texts) for c, texts in zip(parts.corpora, totals.texts, strict=True)],
                  settings=parts.settings, files=files, bytes=size, texts_too_short=totals.too_short,
                  texts_uncheckable=totals.uncheckable, hits=hits, findings=findings, control=control,
                  seconds=round(time.perf_counter() - started, 3))
