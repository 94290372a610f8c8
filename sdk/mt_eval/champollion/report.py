"""What ``mt-eval locales`` prints: a text summary per locale and file, or the same facts as JSON.

Both are byte-identical to what the Node command (``mt-eval-locales``) prints for the same run, error
messages of failed keys aside (a method's exception reads differently in each runtime). With ``--json``, a run
that stops on an error (the config, a busy project, a method that cannot start, a project file) prints a report
too, with ``ok`` false, ``error`` {kind, message} and no locales; a finished run's ``error`` is null, and an
interrupted one's says what was kept (`interrupted_message`, also said on stderr, where the command names the
signal that stopped it when it was not Ctrl-C).
"""

from __future__ import annotations

import re
from typing import Any

from mt_eval.champollion.jsonfmt import format_json
from mt_eval.champollion.sync import FileReport, LocaleReport, SyncReport
from mt_eval.js_text import js_string

_LONE = re.compile("[\ud800-\udfff]")  # (a key of a locale file may hold one: U+FFFD as Node writes it)
_MARK = {"new": "+", "source changed": "~", "now read as ICU": "~", "no longer read as ICU": "~", "method changed": "~",
         "forced": "~"}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _counts(file: FileReport, dry_run: bool) -> str:
    if dry_run:
        parts = [(len(file.due), "to translate"), (file.up_to_date, "up to date"), (len(file.adopted), "adopted"),
                 (len(file.removed), "to remove"), (len(file.failed), "failed")]
    else:
        parts = [(len(file.translated), "translated"), (len(file.copied), "copied"), (file.up_to_date, "up to date"),
                 (len(file.adopted), "adopted"), (len(file.removed), "removed"), (len(file.failed), "failed"),
                 (len(file.interrupted), "not translated (interrupted)")]
    shown = [f"{count} {label}" for count, label in parts if count]
    return ", ".join(shown) or "no keys"


def render_text(report: SyncReport) -> str:
    lines: list[str] = []
    for locale in report.locales:
        lines.append(f"{locale.locale} ({locale.pair}) via {locale.method} ({locale.languages})")
        for file in locale.files:
            if file.error is not None:
                lines.append(f"  {file.file}  error: {file.error}")
                continue
            lines.append(f"  {file.file}  {_counts(file, report.dry_run)}")
            if report.dry_run:
                lines.extend(f"    {_MARK[reason]} {key} ({reason})" for key, reason in file.due)
                lines.extend(f"    - {key}" for key in file.removed)
            lines.extend(f"    failed {key}: {error}" for key, error in file.failed)
            lines.extend(f"    {js_string(key)} is written more than once in one object of this file: its last value "
                         "is kept (JSON readers keep the last), and the others are dropped when the file is written"
                         for key in file.repeated)
        lines.extend(f"  {name}  left alone: its source file is gone (delete it if it is no longer used; its lock "
                     "entries go with it)" for name in locale.orphaned)
        verb = "would send" if report.dry_run else "sent"
        lines.append(f"  {verb} {_plural(locale.sent, 'string')} in {_plural(locale.calls, 'call')}")
    keys = sum(len(f.failed) for r in report.locales for f in r.files)
    left_out = sum(len(f.left_out) for r in report.locales for f in r.files)
    files = sum(f.error is not None for r in report.locales for f in r.files)
    if report.dry_run:
        lines.append("dry run: nothing was sent or written")
    elif keys or files:
        said = [said for count, said in ((keys - left_out, "failed keys kept their previous values"),
                                         (left_out, "failed keys with no previous value are missing from their files "
                                                    "(the next run tries them again)"),
                                         (files, "files with an error were left as they were")) if count]
        lines.append(f"{_plural(keys + files, 'problem')}: {', and '.join(said)}")
    if report.interrupted:
        lines.append("interrupted: what was translated is written; the rest kept its previous values")
    return _LONE.sub("\ufffd", "\n".join(lines) + "\n")


def interrupted_message(report: SyncReport) -> str:
    """What an interrupted run kept and what it did not, for stderr (and the JSON report's error)."""
    files = [f for r in report.locales for f in r.files]
    if report.dry_run:
        return "interrupted; a dry run sends and writes nothing"
    if not files:
        return "interrupted before anything was sent; nothing was written"
    translated = sum(len(f.translated) for f in files if f.error is None)
    copied = sum(len(f.copied) for f in files if f.error is None)  # (not sent: copied as they are)
    kept = translated + copied
    written = sum(f.written for f in files)
    what = f"({translated} translated, {copied} copied) " if copied else "translated "
    parts = [f"interrupted; kept {_plural(kept, 'key')} {what}({_plural(written, 'file')} written, with their "
             "lock entries)" if kept or written else "interrupted; nothing was translated or written"]
    missing = [(r.locale, n) for r in report.locales if (n := sum(len(f.interrupted) for f in r.files))]
    if missing:
        parts.append("not translated: " + ", ".join(f"{_plural(n, 'key')} of {locale}" for locale, n in missing))
    if report.not_started:
        parts.append(f"not started: {', '.join(report.not_started)}")
    rest = "" if len(parts) == 1 else ". Run the same command again for the rest" + (
        "; what was kept is not sent again" if kept else "")
    return "; ".join(parts) + rest


def render_json(report: SyncReport, *, interrupted: str | None = None) -> str:
    return format_json(as_json(report, interrupted=interrupted))


def as_json(report: SyncReport, *, interrupted: str | None = None) -> dict[str, Any]:
    """The report as JSON; ``interrupted``: an interrupted run's error message as the command says it on stderr
    (naming the signal that stopped it: "interrupted by SIGTERM; kept …"), `interrupted_message` by default."""
    error = ({"kind": "interrupted", "message": interrupted or interrupted_message(report)}
             if report.interrupted else None)
    return {"dryRun": report.dry_run, "ok": report.ok, "error": error, "locales": [_locale(r) for r in report.locales]}


def render_error(kind: str, message: str, *, dry_run: bool) -> str:
    """The report of a run that stopped on an error: ``kind`` (config, busy, method, project, or interrupted
    before anything was sent) and the message printed on stderr after the command's name."""
    return format_json({"dryRun": dry_run, "ok": False, "error": {"kind": kind, "message": message}, "locales": []})


def _locale(report: LocaleReport) -> dict[str, Any]:
    return {"locale": report.locale, "pair": report.pair, "method": report.method, "languages": report.languages,
            "sent": report.sent, "calls": report.calls, "files": [_file(f) for f in report.files],
            "orphaned": report.orphaned}


def _file(file: FileReport) -> dict[str, Any]:
    return {"file": file.file, "due": [{"key": k, "reason": r} for k, r in file.due], "upToDate": file.up_to_date,
            "adopted": file.adopted, "removed": file.removed, "repeated": file.repeated, "translated": file.translated,
            "copied": file.copied,
            "failed": [{"key": k, "error": e} for k, e in file.failed], "interrupted": file.interrupted,
            "written": file.written, "error": file.error}


def progress_line(locale: str, done: int, total: int) -> str:
    return f"{locale}: {done}/{total} strings answered"  # (translated, or failed: the report says which)


WAITING_AFTER_S = 10.0  # a call unanswered this long is said (`waiting_line`), and again every WAITING_EVERY_S
WAITING_EVERY_S = 30.0


def waiting_line(locale: str, strings: int, calls: int, waited_s: float, timeout_s: float) -> str:
    """What a run waits for while the method has not answered for long: the strings in flight, how long the oldest
    call has waited, how long a call may take, and that Ctrl-C keeps what was translated."""
    from mt_eval.js_text import js_number

    sent = f"{_plural(strings, 'string')} in {calls} calls, the oldest sent" if calls > 1 else \
        f"{_plural(strings, 'string')} sent"
    return (f"{locale}: still waiting for the method: {sent} {int(waited_s)} s ago (a call may take "
            f"{js_number(timeout_s)} s a string before it fails); Ctrl-C stops, keeping what was translated")

