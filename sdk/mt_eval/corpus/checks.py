"""The rules every corpus obeys, whatever its format.

- at least one entry;
- every entry has an id (a string, or an integer — kept as such in the card, unless beyond 2^53, which a JavaScript
  reader of the card would round: recorded as its text), unique by its text;
- every entry has a source text that is not blank (parallel text, built from lines, is not checked here:
  its empty lines are segments too), except a negative control, whose source may be empty;
- either every scored entry has a reference or none has: a reference-free corpus is translated, not scored;
  one whose entries have ``references`` instead (read by no metric) is refused; a blank reference (``""``, or
  white space only) is none, as an empty TSV cell is, and a corpus whose references are all blank is refused;
- the families (``family``, ``pass_rule``, ``pair``: `mt_eval.corpus.families`) are well formed: a canary has
  a pass rule and a reference, only a negative control names its own pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mt_eval.corpus.families import check_families, family_of, has_families
from mt_eval.corpus.model import SOURCE_ALIASES, Corpus, CorpusError, listing, plural, type_name
from mt_eval.corpus.names import misspelling_of
from mt_eval.corpus.on_disk import BLOCK, EntriesOnDisk
from mt_eval.corpus.tsv import SPACED_COLUMNS
from mt_eval.js_text import SAFE_INTEGER, js_string
from mt_eval.problems import Problem

MAX_PROBLEMS = 50


def check_corpus(corpus: Corpus, *, empty_hint: str | None = None) -> None:
    """Check ``corpus.entries`` in place (integer ids become their text, remembered in ``given_ids``)
    and set ``corpus.references``; raise CorpusError listing every problem."""
    if not corpus.entries:
        raise CorpusError.single(corpus.path, "has no entries", code="empty",
                                 hint=empty_hint or "a corpus needs at least one entry")
    if not _clean(corpus.entries, corpus.ids_from == "field"):
        problems = _no_source_at_all(corpus) or _entry_problems(corpus)
        if problems:
            raise CorpusError(problems, summary=f"corpus {corpus.path} has {plural(len(problems), 'problem')}")
    families = has_families(corpus.entries)
    if families:
        problems = check_families(corpus.entries, file=str(corpus.path), where=corpus.where)
        if problems:
            raise CorpusError(problems, summary=f"corpus {corpus.path}: {plural(len(problems), 'problem')} with its "
                                                "families")
    scored = with_reference = blank = 0
    for entry in corpus.entries:
        if not families or family_of(entry) == "scored":
            scored += 1
            reference = entry.get("reference")  # a string or None: checked above
            if reference is not None:
                if _blank(reference):
                    blank += 1
                else:
                    with_reference += 1
    if 0 < with_reference < scored:
        raise CorpusError([_some_references(corpus, families, with_reference)])
    if blank and not with_reference:
        raise CorpusError([_some_references(corpus, families, with_reference, all_blank=True)])
    if not with_reference and "references" in corpus.field_names:
        raise CorpusError([_unread_references(corpus)])
    # A corpus of canaries and negative controls only is not translation only: its canaries carry references, and
    # the gate judges it (no scored entry: no headline) as it judges such a selection.
    corpus.references = 0 < with_reference == scored or (families and scored == 0)


def _clean(entries: Sequence[Any], check_ids: bool) -> bool:
    """True when every rule holds, checked at C speed; otherwise `_entry_problems` finds what is wrong.
    Entries on disk are checked a block at a time, their ids across blocks."""
    if not isinstance(entries, EntriesOnDisk):
        return _clean_list(entries, check_ids)
    seen: set[Any] = set()
    for block in entries.blocks(BLOCK * 16):
        if not _clean_list(block, check_ids):
            return False
        if check_ids:
            before = len(seen)
            seen.update(e["id"] for e in block)
            if len(seen) != before + len(block):
                return False
    return True


def _clean_list(entries: Sequence[Any], check_ids: bool) -> bool:
    if set(map(type, entries)) != {dict}:
        return False
    if check_ids:
        ids = [e.get("id") for e in entries]
        if set(map(type, ids)) != {str} or "" in ids or len(set(ids)) != len(ids):
            return False
    sources = [e.get("source") for e in entries]
    if set(map(type, sources)) != {str}:
        return False
    if "" in sources or any(map(str.isspace, sources)):
        return False
    return set(map(type, [e.get("reference") for e in entries])) <= {str, type(None)}


def _entry_problems(corpus: Corpus) -> list[Problem]:
    file = str(corpus.path)
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    where = corpus.where
    for i, entry in enumerate(corpus.entries):
        if type(entry) is not dict:
            problems.append(Problem(file=file, path=where(i), code="shape",
                                    message=f"an entry must be an object, got {type_name(entry)}"))
            continue
        entry_id = entry.get("id")
        if type(entry_id) is not str:
            if type(entry_id) is int:
                text = str(entry_id)
                if abs(entry_id) <= SAFE_INTEGER:  # (a larger one is recorded as its text: JavaScript would round it)
                    corpus.given_ids[text] = entry_id
                entry["id"] = entry_id = text
            elif entry_id is None:
                problems.append(Problem(file=file, path=f"{where(i)}.id", code="missing",
                                        message="every entry needs an id (a string or an integer)",
                                        hint="give every entry an id, or none (then ids are line numbers)"))
            else:
                problems.append(Problem(file=file, path=f"{where(i)}.id", code="type",
                                        message=f"an id must be a string or an integer, got {type_name(entry_id)}"))
        if type(entry_id) is str:
            if not entry_id:
                problems.append(Problem(file=file, path=f"{where(i)}.id", code="missing",
                                        message="an id must not be empty"))
            elif entry_id in seen:
                problems.append(Problem(file=file, path=f"{where(i)}.id", code="duplicate",
                                        message=f"duplicate id {js_string(entry_id)} "
                                                f"(first at {where(seen[entry_id])})",
                                        hint="ids must be unique: results are matched to entries by id"))
            else:
                seen[entry_id] = i
        source = entry.get("source")
        if (type(source) is not str or not source.strip()) and not (type(source) is str and
                                                                     entry.get("family") == "negative"):
            problems.append(Problem(file=file, path=f"{where(i)}.source", code="missing",
                                    message="missing source text" if source is None or type(source) is str
                                    else f"source must be a string, got {type_name(source)}",
                                    hint=_misspelled_source(entry) if source is None else None))
        reference = entry.get("reference")
        if reference is not None and type(reference) is not str:
            problems.append(Problem(file=file, path=f"{where(i)}.reference", code="type",
                                    message=f"reference must be a string, got {type_name(reference)}",
                                    hint=_nested_hint(reference)))
        if len(problems) >= MAX_PROBLEMS:
            problems.append(Problem(file=file, path="$", message=f"stopped after {MAX_PROBLEMS} problems",
                                    code="many"))
            break
    return problems


def _blank(reference: str) -> bool:
    """An empty or white-space-only reference, which no metric can score against: it is no reference."""
    return not reference or reference.isspace()


def _has_reference(entry: dict[str, Any]) -> bool:
    reference = entry.get("reference")
    return isinstance(reference, str) and not _blank(reference)


def _some_references(corpus: Corpus, families: bool, with_reference: int, *, all_blank: bool = False) -> Problem:
    """Some but not all scored entries have a reference: name the minority's places. With ``all_blank``, every
    reference the scored entries give is blank: name those."""
    scored = [i for i, e in enumerate(corpus.entries) if not families or family_of(e) == "scored"]
    total = len(scored)
    lacking = all_blank or with_reference >= total - with_reference
    odd = [i for i, e in enumerate(corpus.entries) if (not families or family_of(e) == "scored")
           and (isinstance(e.get("reference"), str) if all_blank else _has_reference(e) != lacking)]
    if corpus.lines is not None:
        numbers = [corpus.lines[i] for i in odd]
        place = ("line " if len(numbers) == 1 else "lines ") + listing(numbers)
    else:
        place = listing([corpus.where(i) for i in odd])
    verb = "has" if len(odd) == 1 else "have"
    what = f"{verb} no reference" if lacking else f"{verb} a reference"
    kind = "" if total == len(corpus.entries) else " scored"
    message = (f"{plural(len(odd), 'entry', 'entries')} of {total:,}{kind} {what} ({place}): either every{kind} "
               "entry has a reference or none has")
    hint = "add the missing references, or remove them all to translate without scoring"
    if lacking and any(isinstance(corpus.entries[i].get("reference"), str) for i in odd):
        hint += " (an empty or white-space reference is no reference)"
    spaced = [corpus.lines[i] for i in odd
              if corpus.lines is not None and SPACED_COLUMNS.search(corpus.entries[i]["source"])]
    if corpus.format == "tsv" and lacking and spaced:
        hint = (f"line {spaced[0]} seems to separate its columns with spaces: TSV columns are separated by one "
                "TAB character")
    return Problem(file=str(corpus.path), path="$", message=message, hint=hint, code="references")


def _unread_references(corpus: Corpus) -> Problem:
    """No entry has a reference, but some have ``references``: the corpus would be translated only."""
    place = corpus.field_place("references")
    unread = 'is not read: an entry is scored against its one "reference", so the corpus would be translated only'
    if corpus.columns is not None:  # TSV: a column of the header or --columns
        path, message = "$", f'{place} is named "references", which {unread}'
    else:
        path, message = f"{place}.references", f'"references" {unread}'
    return Problem(file=str(corpus.path), path=path, message=message, code="references",
                   hint='give each entry its reference as "reference", one text ("references" beside it is hidden '
                        "from the method, but not scored)")


def _no_source_at_all(corpus: Corpus) -> list[Problem]:
    """One problem, not one an entry, when no entry has a ``source`` field: the file is no translation corpus
    (labels for grading, a decisions file), or every entry misspells the field."""
    entries = corpus.entries
    if len(entries) < 2 or not all(type(entry) is dict and "source" not in entry for entry in entries):
        return []  # (one entry: said at its place)
    fields = list(dict.fromkeys(name for entry in entries[:100] for name in entry))
    said = f"no entry has a source text (its entries have {listing([repr(f) for f in fields], 8)})"
    misspelled = _misspelled_source(entries[0])
    if misspelled is not None:
        return [Problem(file=str(corpus.path), path="$", code="missing", message=said, hint=misspelled)]
    return [Problem(file=str(corpus.path), path="$", code="missing", message=f"{said}: it is not a translation corpus",
                    hint='a translation corpus gives each entry a "source" (and a "reference" to score it); labels '
                         "of translations are given to mt-eval grade --labels, and questions for a decision method "
                         "to mt-eval decide run")]


def _misspelled_source(entry: dict[str, Any]) -> str | None:
    """``the entry has "sorce": did you mean "source"?`` when a field of ``entry`` looks like a misspelled source."""
    for name in entry:
        meant = misspelling_of(name, ["source", *SOURCE_ALIASES])
        if meant is not None:
            return f'the entry has "{name}": did you mean "{meant}"?'
    return None


def _nested_hint(value: Any) -> str | None:
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return ('an object of texts by language is not read: give the reference text itself, e.g. '
                '{"source": "...", "reference": "..."}')
    return None
