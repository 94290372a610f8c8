"""A contamination report for people: the verdict, each hit on one line, findings, the planted control."""

from __future__ import annotations

from collections.abc import Callable

from mt_eval.contamination.report import ControlResult, Hit, Report
from mt_eval.control_chars import escaped_for_terminal

_HEADLINE = {"clean": "CLEAN", "contaminated": "CONTAMINATED", "unverified": "UNVERIFIED", "not-run": "NOT RUN"}


def hit_line(hit: Hit, *, show_corpus: bool = True) -> str:
    """``prompt.txt:12  eng-spa-demo.json demo-04 reference  exact, 7 of 7 words: "hay una escuela …"``"""
    corpus = f"{hit.corpus} " if show_corpus else ""
    if hit.kind == "exact":
        overlap = f"{hit.entry_words} of {hit.entry_words} words"
    elif hit.kind == "near-duplicate":
        overlap = f"coverage {hit.coverage:.2f}, longest run {hit.longest_run} of {hit.entry_words} words"
    else:
        overlap = f"a run of {hit.longest_run} of its {hit.entry_words} words"
    return f"{hit.where}  {corpus}{hit.entry_id} {hit.side}  {hit.kind}, {overlap}: \"{hit.matched}\""


def control_line(control: ControlResult | None, has_hits: bool) -> str:
    """``planted control: 20 of 20 found (recall 1.00 ≥ floor 0.90), seed 12345``"""
    if control is None:
        return ("planted control: not run (the check has hits)" if has_hits
                else "planted control: not run (--plant 0)")
    if control.recall is None:
        return f"planted control: could not run: {control.note}"
    relation = "≥" if control.verified else "<"
    return (f"planted control: {control.found} of {len(control.planted)} planted texts found (recall "
            f"{control.recall:.2f} {relation} floor {control.floor:.2f}), seed {control.seed}")


def render(report: Report, *, show: int = 20) -> str:
    """The report as text, one line for each thing it says; at most ``show`` hits are listed (0: all)."""
    corpora = ", ".join(f"{c.name} ({c.entries:,} entries)" for c in report.corpora)
    lines = [f"contamination check of {report.target} against {corpora}"]
    headline = _HEADLINE[report.status]
    lines.append(f"{headline}: " + ("; ".join(report.reasons) if report.reasons else
                                    "no corpus text found, and the planted control proves the check would have"))
    shown = report.hits if show <= 0 else report.hits[:show]
    many_corpora = len(report.corpora) > 1
    lines.extend(f"  {hit_line(hit, show_corpus=many_corpora)}" for hit in shown)
    if len(shown) < len(report.hits):
        lines.append(f"  … and {len(report.hits) - len(shown):,} more (--show 0 lists every hit; --json gives "
                     "every field)")
    if report.findings:
        lines.append("files:")
        for finding in report.findings:
            mark = "  [not checked]" if finding.effect == "unverified" else ""
            lines.append(f"  {finding.file}: {finding.message}{mark}")
    lines.append(control_line(report.control, bool(report.hits)))
    if report.control is not None and report.control.planted:
        planted = ", ".join(f"{p.entry_id} ({p.side})" for p in report.control.planted)
        lines.append(f"  planted: {planted}")
        for p in report.control.planted:
            if not p.found:
                lines.append(f"  missed: {p.entry_id} {p.side} in {p.file}:{p.line} ({p.carrier}; "
                             f"{', '.join(p.perturbations)})")
    s = report.settings
    skipped = ""
    if report.texts_too_short or report.texts_uncheckable:
        skipped = (f"; not checked: {report.texts_too_short:,} texts under {s.min_words} words, "
                   f"{report.texts_uncheckable:,} made only of common n-grams")
    what = f"{report.files:,} file{'s' if report.files != 1 else ''}" if report.mode == "bundle" else "1 corpus"
    lines.append(f"read {what} ({human_size(report.bytes)}) in {report.seconds:.2f} s; n-gram {s.ngram} words, "
                 f"near-duplicate coverage {s.near_duplicate:.2f}, long n-gram {s.long_ngram} words, entries under "
                 f"{s.standalone_below} words only when they stand alone{skipped}")
    # (a line break in a file's name, a link's target or an entry's id is written \\n: it starts no line of its own)
    return "\n".join(escaped_for_terminal(line, one_line=True) for line in lines)


def human_size(count: int) -> str:
    if count < 1000:
        return f"{count} bytes"
    return f"{count / 1e3:,.1f} kB" if count < 1_000_000 else f"{count / 1e6:,.1f} MB"


def progress_printer(prefix: str = "contamination: ") -> Callable[[str], None]:
    """Progress lines on stderr: each step, and how much was read at most every two seconds."""
    import sys
    import time

    last = [0.0]

    def progress(message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 2.0 or not message.startswith("read "):
            last[0] = now
            print(f"{prefix}{message}", file=sys.stderr, flush=True)

    return progress
