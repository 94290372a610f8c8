"""Step 5 of re-verifying a run card (`mt_eval.harness.verify`): the corpus its results name.

The corpus is read the way the card records it was read, its selection applied again; its sha256, the
selection's subset sha256 and every result id are checked, and every entry the card ran must have its result.
`CorpusCache` keeps what was read for the next card, so checking many cards on a few corpora (``mt-eval publish``
of a directory of runs) reads and hashes each corpus once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec
    from mt_eval.harness.runcard import RunCard
    from mt_eval.harness.verification import Verification


class CorpusCache:
    """Corpora read (and selections applied) once for many cards: by how they are read, with the error a
    corpus gave, if any."""

    def __init__(self) -> None:
        self._read: dict[str, Any] = {}

    def spec(self, card: RunCard, card_path: str, given: Any) -> tuple[CorpusSpec, str]:
        """(`card_corpus_spec` of the card, a key naming it), made once per recorded corpus: a card's own
        directory counts only when a recorded path does not exist as written."""
        reading = card.corpus.reading
        recorded = (card.corpus.path, *(f.path for f in reading.files)) if reading is not None else \
            (card.corpus.path,)
        here = self.get(f"exists:{recorded}", lambda: all(Path(p).exists() for p in recorded))
        key = repr((recorded, None if here else str(Path(card_path).parent), repr(reading), repr(given)))
        spec: CorpusSpec = self.get(f"spec:{key}", lambda: _card_corpus_spec(card, card_path, given))
        return spec, key

    def get(self, key: str, read: Any) -> Any:
        """``read()``'s value (or raised error) for ``key``, computed once."""
        if key not in self._read:
            try:
                self._read[key] = (read(), None)
            except (ValueError, OSError) as exc:
                self._read[key] = (None, exc)
        value, error = self._read[key]
        if error is not None:
            raise error
        return value


def check_corpus(result: Verification, card: RunCard, given: CorpusSpec | str | Path | None,
                 corpora: CorpusCache) -> Any:
    """The entries the card's results cover: the corpus read as the card records, its selection applied."""
    from mt_eval.corpus.model import CorpusError, entry_key  # (the modules read on a cache miss are imported then)

    stream = None if given is not None else _recorded_stream(card)
    try:
        if stream is not None:  # (never this command's own standard input in its place: a terminal would wait)
            raise ValueError(f"the run read it from {stream}, which is gone once read")
        spec, _ = corpora.spec(card, result.path, given)
        key = repr(spec)  # (read once by what is read: cards recording one corpus by two paths share --corpus -)
        path = spec.main_path
        source = corpora.get(key, lambda: _load_corpus(spec))
        facts = None if card.selection is None else msgspec.to_builtins(card.selection)
        chosen = None if facts is None else corpora.get(repr((key, facts)), lambda: _select(source, facts))
    except (CorpusError, ValueError) as exc:
        problem = exc.problems[0] if isinstance(exc, CorpusError) and exc.problems else None
        first = str(exc) if problem is None else problem.message
        where = f" {problem.file}" if problem is not None and problem.file else ""
        result.check("corpus", None, f"{where.strip()}: {first}" if where else first)
        parallel = card.corpus.reading is not None and card.corpus.reading.format == "parallel"
        hint = ("give the corpus with --source-file FILE and --reference-file FILE" if parallel
                else "give the corpus with --corpus FILE")
        if stream is not None:
            hint = f"{hint}: the file the run read from {stream} (or pipe it again: --corpus -)" if not parallel \
                else f"{hint} (- for the one the run read from {stream}, piped again)"
        elif given is None and not Path(card.corpus.path).is_absolute() and not Path(card.corpus.path).exists():
            hint = (f"the card records the corpus as {card.corpus.path}, relative to the directory the run started "
                    f"in: run this there, or {hint}")
        result.problem("$.corpus.path", f"cannot read the corpus{where}: {first.removeprefix('cannot read corpus: ')}",
                       hint, code="corpus")
        return None
    result.corpus_entries = len(source.entries)
    if source.sha256 != card.corpus.sha256:
        changed, message, hint = _changed_files(card, source)
        result.check("corpus", False, f"{changed}: sha256 differs")
        result.problem("$.corpus.sha256", message, hint, code="corpus-hash")
        return None
    if not _pair_matches(result, card, source):
        return None
    entries = source.entries
    if chosen is not None and card.selection is not None:
        stated, again = card.selection.subset_sha256, (chosen.facts or {}).get("subset_sha256")
        if stated != again:
            result.check("corpus", False, f"{path}: the selection's subset sha256 differs")
            result.problem("$.selection.subset_sha256", f"the card says {stated[:16]}… but its selection of {path} "
                           f"hashes to {str(again)[:16]}…", "the selection does not reproduce: use the card the run "
                           "wrote", code="subset-hash")
            return None
        entries = chosen.entries
    by_id = corpora.get(repr((key, facts, "ids")), lambda: frozenset(e["id"] for e in entries))
    keys = result.keys or [entry_key(r.id) for r in card.results]
    unknown = [] if by_id.issuperset(keys) else [r.id for r, k in zip(card.results, keys, strict=True)
                                                 if k not in by_id]
    if unknown:
        result.check("corpus", False, f"{path}: {len(unknown)} result ids are not in it")
        result.problem("$.results", f"{len(unknown)} results name ids that are not in {path} (e.g. {unknown[0]!r})",
                       code="unknown-id")
        return None
    part = "" if len(card.results) == len(source.entries) else f" ({len(card.results)} of its entries)"
    wrong = _reading_differs(result, card, source)
    said = [f"{', '.join(wrong)} not what reading it again gives"] if wrong else []
    if missing := _entries_without_result(result, card, entries, keys, by_id):  # (its figures are still checked)
        said.append(f"{missing} of its {'selected entries' if facts else 'entries'} "
                    f"{'has' if missing == 1 else 'have'} no result")
    result.check("corpus", not said, f"{path}: {'; '.join(said)}" if said else f"{path} (sha256 matches){part}")
    return source


def _entries_without_result(result: Verification, card: RunCard, entries: Any, keys: list[str],
                            by_id: frozenset[str]) -> int:
    """How many of the entries the card ran (all of them, or its selection's) have no result, reported: a run
    writes a result for every entry, a failed one too, so an entry without one was taken out of the card."""
    if len(keys) == len(by_id) and not any(p.code == "duplicate" for p in result.problems):
        return 0  # (every result's id is one of them: each has its result)
    missing = by_id.difference(keys)
    if not missing:
        return 0
    first = next(e["id"] for e in entries if e["id"] in missing)  # (in corpus order)
    ran = f"the {len(by_id)} selected entries" if card.selection is not None else f"the corpus's {len(by_id)} entries"
    status = f"; yet the card says the run was {card.status} ($.status)" if card.status == "complete" else ""
    result.problem("$.results", f"{len(missing)} of {ran} {'has' if len(missing) == 1 else 'have'} no result "
                   f"(e.g. {first!r}): a run writes one for every entry it runs, a failed one too{status}",
                   "use the card the run wrote", code="missing-entry")
    return len(missing)


def _reading_differs(result: Verification, card: RunCard, source: Any) -> list[str]:
    """The fields of the card's corpus record — its name and licence, how it was read (format, columns, comment
    lines, references), each file's role, sha256 and lines and, for a selection, the corpus's entries — that are
    not what reading the corpus again gives, each reported. Compared only for a card that records its reading, and
    only the fields it records: the files' paths say where they were, and its warnings and accepted doubts depend
    on the run's --pair."""
    from mt_eval.corpus.describe import reading_facts
    from mt_eval.corpus.files import display_name

    recorded = (result.data or {}).get("corpus")
    stated = recorded.get("reading") if isinstance(recorded, dict) else None
    if not isinstance(stated, dict):
        return []
    facts = reading_facts(source)
    said: dict[str, Any] = {"$.corpus.name": card.corpus.name, "$.corpus.license": card.corpus.license}
    named = source.name if source.name != display_name(Path(source.path)) else display_name(Path(card.corpus.path))
    if card.corpus.name == source.name:  # (named so in it, as its file is named too: read from standard input, say)
        named = source.name
    again: dict[str, Any] = {"$.corpus.name": named, "$.corpus.license": source.license}  # (named in it, or its file)
    if card.selection is not None:  # (else the tallies count the corpus's entries by the results)
        said["$.corpus.entries"], again["$.corpus.entries"] = card.corpus.entries, len(source.entries)
    for key in sorted(stated.keys() & facts.keys() - {"files", "accepted_doubts", "warnings"}):
        said[f"$.corpus.reading.{key}"], again[f"$.corpus.reading.{key}"] = stated[key], facts[key]
    files: list[Any] = stated.get("files") or []  # (the schema checked it is a list)
    if len(files) != len(facts["files"]):
        said["$.corpus.reading.files"], again["$.corpus.reading.files"] = len(files), len(facts["files"])
    for index, (file, fact) in enumerate(zip(files, facts["files"], strict=False)):
        for key in ("role", "sha256", "lines"):
            if isinstance(file, dict) and key in file:
                said[f"$.corpus.reading.files[{index}].{key}"] = file[key]
                again[f"$.corpus.reading.files[{index}].{key}"] = fact[key]
    wrong = [where for where in again if said[where] != again[where]]
    for where in wrong:
        unit = " files" if where == "$.corpus.reading.files" else ""
        card_says, read_says = (msgspec.json.encode(value).decode() + unit for value in (said[where], again[where]))
        result.problem(where, f"the card says {card_says}, its corpus read again gives {read_says}",
                       "use the card the run wrote", code="corpus-facts")
    return [where.removeprefix("$.") for where in wrong]


def _recorded_stream(card: RunCard) -> str | None:
    """The pipe or standard input a card records its corpus was read from (`stream_name`: ``standard input``,
    ``/dev/fd/63``), or None when it was read from files."""
    from mt_eval.corpus.files import stream_name

    reading = card.corpus.reading
    recorded = (card.corpus.path, *(f.path for f in reading.files)) if reading is not None else (card.corpus.path,)
    return next((named for path in recorded if (named := stream_name(Path(path))) is not None), None)


def _pair_matches(result: Verification, card: RunCard, source: Any) -> bool:
    """Whether the card's pair is the corpus's (in any spelling), or the run accepted the mismatch
    (``--accept-doubt pair-mismatch``); the problem is reported when not."""
    from mt_eval.pairs import same_languages

    accepted = card.corpus.reading.accepted_doubts if card.corpus.reading is not None else []
    if not source.pair or same_languages(card.corpus.pair, source.pair) or "pair-mismatch" in accepted:
        return True
    result.check("corpus", False, f"the card's pair {card.corpus.pair!r} is not the corpus's {source.pair!r}")
    result.problem("$.corpus.pair", f"the card says the run was in '{card.corpus.pair}', but its corpus declares "
                   f"'{source.pair}' and the run did not accept that doubt (--accept-doubt pair-mismatch)",
                   "use the card the run wrote", code="pair")
    return False


def _card_corpus_spec(card: RunCard, card_path: str, given: Any) -> CorpusSpec:
    from mt_eval.harness.corpus import card_corpus_spec

    return card_corpus_spec(card, card_path, given)


def _changed_files(card: RunCard, source: Any) -> tuple[str, str, str]:
    """Which file differs from the corpus the card was run on, how, and the fix: for parallel text, the file (source
    or reference) whose own sha256 differs from the one the card records (their combined sha256 names neither)."""
    recorded = {f.role: f.sha256 for f in (card.corpus.reading.files if card.corpus.reading else [])}
    files = getattr(source, "files", None) or []
    if source.format == "parallel" and files and recorded:
        changed = [f for f in files if recorded.get(f.role) not in (None, f.sha256)]
        if changed:
            said = "; ".join(f"{f.path} (the {f.role} file) has sha256 {f.sha256[:16]}… but the run read "
                             f"{recorded[f.role][:16]}…" for f in changed)
            return (", ".join(str(f.path) for f in changed), said, "give the exact files the run used with "
                    "--source-file FILE and --reference-file FILE; an edited file makes another corpus")
    return (str(source.path),
            f"{source.path} has sha256 {source.sha256[:16]}… but the card was run on {card.corpus.sha256[:16]}…",
            "give the exact corpus the run used with --corpus FILE (parallel text: --source-file and "
            "--reference-file)")


def _load_corpus(spec: CorpusSpec) -> Any:
    from mt_eval.corpus.reader import load_corpus

    return load_corpus(spec)


def _select(source: Any, facts: dict[str, Any]) -> Any:
    from mt_eval.corpus.selection import request_from_facts, select

    return select(source, request_from_facts(facts))
