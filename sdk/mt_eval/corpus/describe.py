"""Saying how a corpus was read: one line for ``mt-eval run``, the facts for the run card and ``corpus show``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.corpus.files import file_label
from mt_eval.corpus.model import FORMAT_NAMES, Corpus, listing, plural


def reading_facts(corpus: Corpus) -> dict[str, Any]:
    """How the corpus was read, as the run card's ``corpus.reading`` records it."""
    return {
        "format": corpus.format,
        "columns": None if corpus.columns is None else [c.key for c in corpus.columns],
        "columns_from": corpus.columns_from,
        "header_line": corpus.header_line,
        "ids_from": corpus.ids_from,
        "aliases": dict(corpus.aliases),
        "comment_lines": len(corpus.comment_lines),
        "references": corpus.references,
        "files": [{"role": f.role, "path": str(f.path), "sha256": f.sha256, "lines": f.lines} for f in corpus.files],
        "accepted_doubts": list(corpus.accepted_doubts),
        "warnings": list(corpus.warnings),
    }


def layout(corpus: Corpus) -> str:
    """The format and where the fields come from, e.g. ``TSV without a header: source<TAB>reference``."""
    if corpus.format == "parallel":
        names = " and ".join(f"{_label(f.path)} ({f.role}s)" for f in corpus.files)
        return f"parallel text, one segment per line: {names}"
    if corpus.format == "tsv" and corpus.columns is not None:
        keys = "<TAB>".join(c.key for c in corpus.columns)
        origin = {"header": f"with a header (line {corpus.header_line})",
                  "convention": "without a header, read by the MT convention",
                  "--columns": "with the columns given by --columns"}[corpus.columns_from or "convention"]
        return f"TSV {origin}: {keys}"
    if corpus.format == "json":
        return "JSON, upstream shape (entries under \"entries\")" if corpus.entries_at != "$" else "JSON list"
    return FORMAT_NAMES[corpus.format]


def id_origin(corpus: Corpus) -> str:
    if corpus.ids_from == "field":
        kinds = " (integers, kept as integers in the run card)" if corpus.given_ids else ""
        return f"from the id {'column' if corpus.format == 'tsv' else 'field'}{kinds}"
    return f"the entries' {corpus.ids_from} (1, 2, 3, …)" if corpus.ids_from == "positions" else \
        "line numbers in the file"


def alias_note(corpus: Corpus) -> str | None:
    if not corpus.aliases:
        return None
    return ", ".join(f'"{alias}" read as {role}' for alias, role in corpus.aliases.items())


def references_note(corpus: Corpus) -> str:
    if corpus.references and family_counts(corpus.entries) is not None:
        return "every scored entry and every canary has one (negative controls need none)"
    if corpus.references:
        return "every entry has one (scored)"
    return "none: translation only, nothing is scored"


def family_counts(entries: Sequence[dict[str, Any]]) -> str | None:
    """``30 scored, 3 canaries, 3 negative controls`` (None when no entry names a family)."""
    from mt_eval.corpus.families import FAMILIES, family_of, has_families

    if not has_families(entries):
        return None
    counts = dict.fromkeys(FAMILIES, 0)
    for entry in entries:
        counts[family_of(entry)] += 1
    return (f"{counts['scored']:,} scored, {plural(counts['canary'], 'canary', 'canaries')}, "
            f"{plural(counts['negative'], 'negative control')}")


def summary_line(corpus: Corpus, selected: Sequence[dict[str, Any]] | None = None) -> str:
    """One line saying how the corpus is read, printed by ``mt-eval run``; with ``selected`` (the entries a run
    selected), the families counted are the selection's."""
    parts = [layout(corpus)]
    aliases = alias_note(corpus)
    if aliases:
        parts.append(aliases + " (aliases)")
    if corpus.ids_from != "field":
        parts.append(f"ids are {id_origin(corpus)}")
    if corpus.comment_lines:
        parts.append(f"{plural(len(corpus.comment_lines), 'comment line')} skipped "
                     f"(line{'s' if len(corpus.comment_lines) > 1 else ''} {listing(corpus.comment_lines, 5)})")
    count = plural(len(corpus.entries), "entry", "entries")
    chosen = corpus.entries
    if selected is not None and len(selected) != len(corpus.entries):
        count, chosen = f"{len(selected):,} of {count} selected", selected
    parts.append(count)
    families = family_counts(chosen)
    if families is not None:
        parts.append(families)
    if not corpus.references:
        parts.append("no references: translation only, not scored")
    return f"corpus {_label(corpus.path)}: " + "; ".join(parts)


def _label(path: Path) -> str:
    """`file_label` on one line, with its control and invisible characters escaped (a name may hold them)."""
    return escaped_for_terminal(file_label(path), one_line=True)
