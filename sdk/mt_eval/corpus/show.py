"""``mt-eval corpus show``: how mt-eval reads a corpus — format, columns and their roles, ids, entries, first
rows, sha256, and anything doubtful — exactly as ``mt-eval run`` would read it."""

from __future__ import annotations

from typing import Any

import msgspec

from mt_eval.control_chars import escaped_controls, escaped_for_terminal, first_control
from mt_eval.corpus.describe import alias_note, family_counts, id_origin, layout, reading_facts, references_note
from mt_eval.corpus.files import stream_name
from mt_eval.corpus.model import Corpus, CorpusError, listing
from mt_eval.corpus.selection import Selection

TEXT_WIDTH = 48


def build_report(corpus: Corpus, selection: Selection, pair: str | None, refused: CorpusError | None, *,
                 rows: int) -> dict[str, Any]:
    facts = reading_facts(corpus)
    columns = None
    if corpus.columns is not None:
        columns = [{"column": c.index + 1, "field": c.key, "role": c.role, "header": c.header}
                   for c in corpus.columns]
    first = [{**e, "id": corpus.given_id(e["id"])} for e in selection.entries[: max(rows, 0)]]
    return {
        "file": str(corpus.path), "readable": True, "name": corpus.name, "format": corpus.format,
        "layout": layout(corpus),
        "columns": columns, "columns_from": corpus.columns_from, "header_line": corpus.header_line,
        "ids_from": corpus.ids_from, "aliases": facts["aliases"], "comment_lines": corpus.comment_lines,
        "entries": len(corpus.entries), "families": family_counts(corpus.entries), "references": corpus.references,
        "sha256": corpus.sha256,
        "files": facts["files"], "pair": pair, "warnings": corpus.warnings,
        "refused": [] if refused is None else [{"message": p.message, "hint": p.hint} for p in refused.problems],
        "selection": selection.facts, "first": first,
    }


def render_text(corpus: Corpus, report: dict[str, Any]) -> str:
    """The report as text a terminal may be given: no control or invisible character acts on it."""
    lines = [_path(stream_name(corpus.path) or str(corpus.path))]  # (standard input: so named, not /dev/stdin)

    def fact(label: str, value: object) -> None:
        lines.append(f"  {label:<11} {value}")

    fact("format", report["layout"])
    if report["columns"]:
        width = max(len(column["field"]) for column in report["columns"])
        for column in report["columns"]:
            notes = [f'header "{column["header"]}"'] if column["header"] is not None else []
            if column["role"] == "extra":
                notes.append("kept as an extra field" + (" when not empty" if column["header"] == "" else ""))
            lines.append(f"  {'':<11}   column {column['column']}: {column['field']:<{width}}  {', '.join(notes)}"
                         .rstrip())
    for file in report["files"] if corpus.format == "parallel" else []:
        fact(file["role"], f"{_path(file['path'])} ({file['lines']:,} lines, sha256 {file['sha256']})")
    fact("ids", id_origin(corpus))
    aliases = alias_note(corpus)
    if aliases:
        fact("aliases", aliases)
    if corpus.comment_lines:
        fact("comments", f"line{'s' if len(corpus.comment_lines) > 1 else ''} "
                         f"{listing(corpus.comment_lines)} (skipped)")
    fact("references", references_note(corpus))
    fact("entries", f"{report['entries']:,}" + (f" ({report['families']})" if report.get("families") else ""))
    if report["pair"]:
        fact("pair", report["pair"])
    fact("sha256", report["sha256"] + (" (over both files' sha256)" if len(report["files"]) > 1 else ""))
    selection = report["selection"]
    if selection is not None:
        fact("selection", f"{selection['entries_selected']:,} of {selection['entries_in_corpus']:,} entries, "
                          f"subset sha256 {selection['subset_sha256']}")
    lines.extend(f"  warning: {warning}" for warning in report["warnings"])
    for refusal in report["refused"]:
        lines.append(f"  refused: {refusal['message']}")
        lines.append(f"    fix: {refusal['hint']}")
    if report["first"]:
        lines.append(f"first {len(report['first'])} entr{'y' if len(report['first']) == 1 else 'ies'}:")
        lines.extend(_entry_rows(report["first"]))
    return escaped_for_terminal("\n".join(lines)) + "\n"  # (a value's U+202E would turn around what follows)


def _path(text: str) -> str:
    """A file's path on one line, its control characters escaped (a line break in a name would break the facts)."""
    return escaped_for_terminal(text, one_line=True)


def _entry_rows(entries: list[dict[str, Any]]) -> list[str]:
    width = max(len(_name(str(e["id"]))) for e in entries)
    rows = []
    for entry in entries:
        rows.append(f"  {_name(str(entry['id'])):>{width}}  source     {_clip(entry['source'])}")
        if "reference" in entry:
            rows.append(f"  {'':>{width}}  reference  {_clip(entry['reference'])}")
        extras = {k: v for k, v in entry.items() if k not in ("id", "source", "reference")}
        for key, value in extras.items():
            rows.append(f"  {'':>{width}}  {_name(key):<9}  {_clip(value)}")
    return rows


def _name(text: str) -> str:
    """An id or a field's name as it is, or quoted as JSON with its escapes when it holds a control character (a
    terminal would obey an ESC; a line break would break the row)."""
    if first_control(text) is None:
        return text
    return escaped_controls(msgspec.json.encode(text).decode())


def _clip(value: object) -> str:
    """The value on one line as JSON: a text quoted, control characters and TABs visible, long texts shortened
    (``null`` for a reference a JSON corpus leaves out that way)."""
    if isinstance(value, str):
        value = value if len(value) <= TEXT_WIDTH else value[: TEXT_WIDTH - 1] + "…"
        return msgspec.json.encode(value).decode()
    return msgspec.json.encode(value).decode()[:TEXT_WIDTH]
