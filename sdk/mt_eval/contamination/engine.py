"""The contamination check from end to end: read the corpora, index them, read the bundle (or the other
corpus), find hits, run the planted control when there are none, and add it all up to a verdict."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from mt_eval.contamination.control import bundle_control, corpus_control
from mt_eval.contamination.corpora import CorpusTexts, load_corpus
from mt_eval.contamination.extract import BundleReader
from mt_eval.contamination.index import CorpusIndex
from mt_eval.contamination.matching import Document, Matcher
from mt_eval.contamination.render import human_size
from mt_eval.contamination.report import ControlResult, CorpusSummary, Finding, Hit, Report, verdict
from mt_eval.contamination.settings import CheckSettings

Progress = Callable[[str], None]


class CheckError(Exception):
    """The check cannot run (a missing bundle, an unreadable corpus); the message says how to fix it."""


def check_bundle(bundle: str | Path, corpora: Sequence[str | Path | CorpusTexts], settings: CheckSettings | None = None,
                 progress: Progress | None = None, index: CorpusIndex | None = None) -> Report:
    """Check a method's bundle (a directory) against one or more corpora (or an index built from them by
    `build_index`, to check several bundles against the same corpora)."""
    settings = index.settings if index is not None else settings or CheckSettings()
    bundle = Path(bundle)
    if not bundle.is_dir():
        raise CheckError(f"{bundle} is not a directory: give the method plugin's directory")
    started = time.perf_counter()
    index = index or build_index(corpora, settings, progress)
    say = progress or (lambda _message: None)
    hits, findings, files, size = scan_bundle(bundle, index, lambda f, b: say(f"read {f:,} files, {human_size(b)}"))
    control = None
    if not hits and settings.plant:
        say(f"planted control: {min(settings.plant, index.units)} corpus texts into a copy of the bundle")
        control = bundle_control(bundle, index, lambda root: scan_bundle(
            root, index, lambda f, b: say(f"read {f:,} files of the copy, {human_size(b)}"))[0])
    return _report(str(bundle), "bundle", index, hits, findings, control, files, size, started)


def check_corpora(against: str | Path | CorpusTexts, corpora: Sequence[str | Path | CorpusTexts],
                  settings: CheckSettings | None = None,
                  progress: Progress | None = None) -> Report:
    """Check whether corpus ``against`` (e.g. a development set) holds texts of ``corpora`` (e.g. a test set)."""
    settings = settings or CheckSettings()
    started = time.perf_counter()
    index = build_index(corpora, settings, progress)
    other = against if isinstance(against, CorpusTexts) else _load(against)
    matcher = Matcher(index)
    hits = [hit for document in corpus_documents(other) for hit in matcher.scan(document)]
    control = None
    if not hits and settings.plant:
        def scan_texts(extra: Sequence[tuple[str, str]]) -> list[Hit]:
            labels = [label for label, _text in extra]
            pieces = [(number, text.replace("\n", "\t")) for number, (_label, text) in enumerate(extra)]
            return Matcher(index).scan(Document(other.name, pieces, locator="entry", entry_ids=labels,
                                                side="source"))

        control = corpus_control(index, scan_texts)
    size = other.path.stat().st_size if other.path.exists() else 0
    return _report(str(other.path), "corpus", index, hits, [], control, 1, size, started)


def scan_bundle(root: Path, index: CorpusIndex, progress: Callable[[int, int], None] | None = None
                ) -> tuple[list[Hit], list[Finding], int, int]:
    """Hits and findings of one pass over a bundle directory, and how many files and bytes it read."""
    reader = BundleReader(root, index.settings, progress)
    matcher = Matcher(index)
    hits = [hit for document in reader.documents() for hit in matcher.scan(document)]
    return hits, reader.findings, reader.files, reader.bytes


def corpus_documents(corpus: CorpusTexts) -> list[Document]:
    """A corpus as two documents, its sources and its references, one piece per entry."""
    documents = []
    for side in ("source", "reference"):
        texts = [(entry_id, text) for entry_id, text_side, text in corpus.texts if text_side == side]
        pieces = [(number, text.replace("\n", "\t")) for number, (_id, text) in enumerate(texts)]
        documents.append(Document(corpus.name, pieces, locator="entry", entry_ids=[i for i, _t in texts],
                                  side=side))
    return documents


def build_index(corpora: Sequence[str | Path | CorpusTexts], settings: CheckSettings | None = None,
                progress: Progress | None = None) -> CorpusIndex:
    """Read the corpora (files, or texts already read: `corpora.texts_of`) and index their texts
    (`CheckError` when one cannot be read)."""
    settings = settings or CheckSettings()
    if not corpora:
        raise CheckError("no corpus given: name at least one with --corpus FILE")
    loaded = [corpus if isinstance(corpus, CorpusTexts) else _load(corpus) for corpus in corpora]
    if progress:
        progress(f"indexing {sum(len(c.texts) for c in loaded):,} texts of {len(loaded)} corpus "
                 f"file{'s' if len(loaded) > 1 else ''}")
    return CorpusIndex(loaded, settings)


def _load(path: str | Path) -> CorpusTexts:
    from mt_eval.contamination.corpora import CorpusUnreadable

    try:
        return load_corpus(path)
    except CorpusUnreadable as exc:
        raise CheckError(str(exc)) from exc


def _report(target: str, mode: str, index: CorpusIndex, hits: list[Hit], findings: list[Finding],
            control: ControlResult | None, files: int, size: int, started: float) -> Report:
    checkable = index.units - index.uncheckable
    status, reasons = verdict(hits, findings, control, checkable)
    return Report(status=status, reasons=reasons, target=target, mode=mode,  # type: ignore[arg-type]
                  corpora=[CorpusSummary(path=str(c.path), name=c.name, sha256=c.sha256, entries=c.entries,
                                         texts=len(c.texts)) for c in index.corpora],
                  settings=index.settings, files=files, bytes=size, texts_too_short=index.too_short,
                  texts_uncheckable=index.uncheckable, hits=hits, findings=findings, control=control,
                  seconds=round(time.perf_counter() - started, 3))
