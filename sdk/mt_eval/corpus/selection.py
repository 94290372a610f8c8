"""Running part of a corpus: ``--ids``, ``--segment`` and ``--limit``.

``--ids`` takes ids and inclusive ranges in corpus order, comma-separated: ``--ids 3,7,10..20`` (``A..``
runs to the end, ``..B`` from the start); ``--ids @FILE`` reads one id per line. ``--segment NAME`` keeps
the entries whose ``segment`` field is NAME (repeatable). ``--limit N`` keeps the first N of what is left.
The entries keep their corpus order. A selection is recorded with the SHA-256 of the selected entries
(`subset_sha256`), so a subset is never mistaken for the whole corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.corpus.model import Corpus, CorpusError, entry_key, listing, plural
from mt_eval.corpus.on_disk import EntriesOnDisk, kept
from mt_eval.js_text import js_string

_encode_sorted = msgspec.json.Encoder(order="sorted").encode


@dataclass
class SelectionRequest:
    """What the command line asked for; empty when the whole corpus runs."""

    ids: list[str] = field(default_factory=list)  # --ids values as given (before splitting)
    segments: list[str] = field(default_factory=list)
    limit: int | None = None
    exact_ids: list[str] = field(default_factory=list)  # ids a card recorded: each taken whole, never split or read

    def __bool__(self) -> bool:
        return bool(self.ids or self.exact_ids or self.segments or self.limit is not None)

    def filters(self) -> dict[str, Any] | None:
        """``--ids`` and ``--segment`` as given (None when neither is), for a resumed run to compare; an ``@FILE``
        comes with the ids the file holds now, so a resume after the file was edited is refused too."""
        if not (self.ids or self.segments):
            return None
        files = {value: _file_ids_or_none(value) for value in self.ids if value.startswith("@")}
        return {"ids": self.ids, "segments": self.segments, **({"files": files} if files else {})}


@dataclass
class Selection:
    """The entries to run; ``facts`` (for the run card) is None when they are the whole corpus."""

    entries: Sequence[dict[str, Any]]
    facts: dict[str, Any] | None = None

    @property
    def describe(self) -> str:
        if self.facts is None:
            return "the whole corpus"
        return f"{self.facts['entries_selected']:,} of {self.facts['entries_in_corpus']:,} entries"


def select(corpus: Corpus, request: SelectionRequest) -> Selection:
    """The entries ``request`` selects, in corpus order; refuses unknown ids and empty selections."""
    entries = corpus.entries
    if not request:
        return Selection(entries)
    ids: list[str] = []
    ranges: list[str] = []
    if request.ids or request.exact_ids:
        position = {e["id"]: i for i, e in enumerate(entries)}
        keep: set[int] = set()
        for item in request.exact_ids:
            if item not in position:
                raise CorpusError.single(corpus.path, f"no entry has the id {js_string(item)}, which the card's "
                                         "selection names", code="selection",
                                         hint="give the corpus the card was run on")
            keep.add(position[item])
            ids.append(item)
        for value in request.ids:
            for item in _id_items(corpus.path, value, position):
                if ".." in item and item not in position:
                    first, last = _range(corpus.path, item, position, entries)
                    keep.update(range(first, last + 1))
                    ranges.append(item)
                else:
                    keep.add(position[item])
                    ids.append(item)
        entries = (entries.take(sorted(keep)) if isinstance(entries, EntriesOnDisk)
                   else [e for i, e in enumerate(entries) if i in keep])
    if request.segments:
        entries = _by_segment(corpus, entries, request.segments)
    if request.limit is not None:
        if request.limit < 1:
            raise CorpusError.single(corpus.path, f"--limit {request.limit} selects no entries",
                                     hint="give --limit 1 or more", code="selection")
        entries = entries[: request.limit]
    if not entries:
        raise CorpusError.single(corpus.path, "the selection matches no entry", code="selection",
                                 hint="--ids and --segment together keep only entries matching both")
    facts = {
        "ids": [corpus.given_id(i) for i in dict.fromkeys(ids)] or None,
        "ranges": ranges or None,
        "segment": request.segments or None,
        "limit": request.limit,
        "entries_in_corpus": len(corpus.entries),
        "entries_selected": len(entries),
        "subset_sha256": subset_sha256(corpus, entries),
    }
    return Selection(entries, facts)


def subset_sha256(corpus: Corpus, entries: Sequence[dict[str, Any]]) -> str:
    """SHA-256 over the entries as canonical JSON (sorted keys, ids as the file gave them), one per line."""
    digest = hashlib.sha256()
    for entry in entries:
        given = corpus.given_ids.get(entry["id"])
        digest.update(_encode_sorted(entry if given is None else {**entry, "id": given}) + b"\n")
    return digest.hexdigest()


def request_from_facts(facts: dict[str, Any]) -> SelectionRequest:
    """The request that reproduces a recorded selection (``mt-eval compare`` re-selects with it)."""
    # The ids exactly as recorded (`exact_ids`: an id holding a comma or spaces, starting with "@", or equal to
    # several others joined, is the id it is); the ranges joined by commas, as a user writes them (a comma first
    # keeps one that begins with "@" from naming a file).
    ranges = list(facts.get("ranges") or [])
    values = [("," if ranges[0].startswith("@") else "") + ",".join(ranges)] if ranges else []
    return SelectionRequest(ids=values, segments=list(facts.get("segment") or []), limit=facts.get("limit"),
                            exact_ids=[entry_key(i) for i in facts.get("ids") or []])


def id_options(facts: dict[str, Any]) -> list[str]:
    """The ``--ids`` values a user would type to select a recorded selection's ids and ranges again (for a command
    shown to them; `request_from_facts` selects them exactly). An id these would not give back (one holding a
    comma, or spaces around it) goes in a value of its own, which ``--ids`` takes whole; a comma first keeps a
    value that begins with "@" from naming a file."""
    ids = [entry_key(i) for i in facts.get("ids") or []]

    def given_back(item: str) -> bool:
        return "," not in item and item == item.strip() and item != ""

    joined = [i for i in ids if given_back(i)] + list(facts.get("ranges") or [])
    alone = [i for i in ids if not given_back(i)]
    return ([("," if joined[0].startswith("@") else "") + ",".join(joined)] if joined else []) + alone


def _file_lines(value: str) -> list[str]:
    """The lines of an ``--ids @FILE`` value's file that are not blank, as written (OSError, UnicodeDecodeError)."""
    return [line for line in Path(value[1:]).read_text(encoding="utf-8-sig").splitlines() if line.strip()]


def _file_ids_or_none(value: str) -> list[str] | None:
    try:
        return _file_lines(value)
    except (OSError, UnicodeDecodeError):
        return None


def _id_items(corpus_path: Path, value: str, position: dict[str, int]) -> list[str]:
    """The ids and ranges of one ``--ids`` value; an id that contains a comma or ``..`` still works."""
    if value.startswith("@"):
        try:
            lines = _file_lines(value)
        except OSError as exc:
            raise CorpusError.single(corpus_path, f"--ids {value}: cannot read it: {exc.strerror or exc}",
                                     code="selection", hint="give a file with one id per line") from exc
        except UnicodeDecodeError as exc:
            raise CorpusError.single(corpus_path, f"--ids {value}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                                     f"at offset {exc.start})", code="selection",
                                     hint="save it as UTF-8, one id per line") from exc
        items = [line if line in position else line.strip() for line in lines]  # (an id may hold spaces)
    elif value in position:
        items = [value]
    else:
        items = [part.strip() for part in value.split(",") if part.strip()]
    if not items and value.startswith("@"):
        raise CorpusError.single(corpus_path, f"--ids {value}: the file names no id", code="selection",
                                 hint="write one id per line")
    if not items:
        raise CorpusError.single(corpus_path, f"--ids {value!r} names no id", code="selection",
                                 hint="give ids and ranges, comma-separated, e.g. --ids 3,7,10..20")
    unknown = [i for i in items if i not in position and ".." not in i]
    if unknown:
        raise CorpusError.single(corpus_path, f"--ids: no entry has the id{'s' if len(unknown) > 1 else ''} "
                                 f"{listing([js_string(i) for i in unknown])}", code="selection",
                                 hint="ids are matched exactly; mt-eval corpus show FILE lists the first ones")
    return items


def _range(corpus_path: Path, item: str, position: dict[str, int], entries: Sequence[dict[str, Any]]
           ) -> tuple[int, int]:
    start, _, end = item.partition("..")
    for bound in (start, end):
        if bound and bound not in position:
            raise CorpusError.single(corpus_path, f"--ids {item}: no entry has the id {js_string(bound)}",
                                     code="selection",
                                     hint="a range A..B runs from the entry with id A to the one with id B")
    first = position[start] if start else 0
    last = position[end] if end else len(entries) - 1
    if first > last:
        raise CorpusError.single(corpus_path,
                                 f"--ids {item}: {js_string(start)} comes after {js_string(end)} in the corpus",
                                 code="selection",
                                 hint=f"write the range in corpus order: {end}..{start}")
    return first, last


def _by_segment(corpus: Corpus, entries: Sequence[dict[str, Any]], segments: list[str]) -> Sequence[dict[str, Any]]:
    present = {str(e["segment"]) for e in corpus.entries if e.get("segment") is not None}
    if not present:
        raise CorpusError.single(corpus.path, "--segment: no entry has a segment field", code="selection",
                                 hint='give entries a "segment" field (a TSV column named segment)')
    missing = [s for s in segments if s not in present]
    if missing:
        raise CorpusError.single(corpus.path, f"--segment: no entry is in {listing([js_string(s) for s in missing])}",
                                 code="selection", hint=f"the corpus has {plural(len(present), 'segment')}: "
                                                        f"{listing([js_string(s) for s in sorted(present)])}")
    wanted = set(segments)
    return kept(entries, lambda e: e.get("segment") is not None and str(e["segment"]) in wanted)
