"""``mt-eval validate DIR…``: check method plugins, and render the reports for people (rich text) or CI (``--json``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mt_eval.cli.arguments import add_start_timeout_argument, positive_float
from mt_eval.cli.usage_errors import named_path, plugin_operand

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.validate import PluginReport

EXPECTED = (ValueError,)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Check method plugin directories: method.json, method_card.json, a static scan of the "
                          "code against the declared dependencies, and every entry point they declare, started "
                          "inside the sandbox: the Python entry imported and built, the Node entry loaded through "
                          "the Node guest, a command started for the bridge handshake, and a plugin with both a "
                          "Python and a Node entry translating a few probe sentences with both (deciding a few probe "
                          "rows, for a decision method) and reporting its method card from both (a difference is a "
                          "warning). Every problem is reported with its file, JSON path or line, and a fix.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n  mt-eval validate examples/lexicon-eng-spa\n"
                     "  mt-eval validate --json --strict examples/*-eng-spa\n"
                     "  mt-eval validate --no-import my-method      # files and scan only: runs no plugin code\n"
                     "  mt-eval validate --no-sandbox my-method     # import on this host (trusted code only)\n"
                     "\nexit status: 0 every plugin valid (with --strict, without warnings too); 1 a plugin is not, "
                     "or a --corpus\ncannot be read; 2 usage")
    parser.add_argument("plugins", type=plugin_operand, nargs="+", metavar="DIR", help="plugin directories")
    parser.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument("--no-import", dest="run_code", action="store_false",
                        help="check the files only; do not import, start or run the method")
    parser.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                        help="import the entry point on this host instead of in the sandbox (only for code you "
                             "trust; the default confines it, so validating runs nothing on the host)")
    parser.add_argument("--no-scan", dest="scan", action="store_false",
                        help="skip the static scan of the plugin's code (network, downloads, programs, dynamic "
                             "code, files outside the plugin) against its declared dependencies")
    parser.add_argument("--timeout", type=positive_float, default=10.0, metavar="S",
                        help="seconds the entry points get to translate the probes, and each later step (default 10)")
    add_start_timeout_argument(parser, "each entry point (a Python entry imported and built, here or in the "
                                       "sandbox; a Node entry or a command, to answer initialize)",
                               note="; past it the plugin fails validation")
    parser.add_argument("--corpus", type=named_path, action="append", default=[], metavar="FILE",
                        help="also run the contamination check against this evaluation corpus (repeatable): "
                             "contaminated is an error, unverified a warning")


def run(args: argparse.Namespace) -> int:
    from mt_eval.guarded_calls import prints_to_stderr
    from mt_eval.validate import ValidateReport, validate_plugin

    with prints_to_stderr():  # what a plugin prints as it is imported is not the report (--json, or the sandbox's)
        reports = [validate_plugin(Path(path), run_code=args.run_code, scan=args.scan, sandbox=args.sandbox,
                                   timeout_s=args.timeout, start_timeout_s=args.start_timeout)
                   for path in args.plugins]
    if args.corpus:
        from mt_eval.validate.contamination import check_reports

        check_reports(reports, [Path(c) for c in args.corpus])  # ValueError: a corpus cannot be read
    strict = args.strict
    ok = all(r.passed(strict=strict) for r in reports)
    if args.json:
        from mt_eval.cli.json_output import json_text

        sys.stdout.write(json_text(ValidateReport(ok=ok, strict=strict, plugins=reports)))  # (U+202E as \u202e)
    else:
        _print_reports(reports, strict=strict)
    return 0 if ok else 1


def _print_reports(reports: Sequence[PluginReport], *, strict: bool) -> None:
    from rich.console import Console

    from mt_eval.validate import describe_class

    console = Console(highlight=False, soft_wrap=True)
    console.on_broken_pipe = _reader_gone  # type: ignore[method-assign]
    for report in reports:
        passed = report.passed(strict=strict)
        mark = "[green]✓[/]" if passed else "[red]✗[/]"
        title = f"{report.method_id} ({report.method_class}, {report.runtime})" if report.method_id else ""
        console.print(f"{mark} [bold]{_shown(report.directory)}[/]  {_shown(title)}")
        if report.method_id:
            console.print(f"    {_shown(describe_class(report))}")
        if report.import_sandbox:
            failed = any(p.code == "entry-point" and p.severity == "error" for p in report.problems)
            done = "loaded in the sandbox, and failed (below)" if failed else "imported in the sandbox"
            console.print(f"    [dim]entry point {done} ({_shown(report.import_sandbox)})[/]")
        for c in report.contributions:
            console.print(f"      {_shown(c['path'])} {_shown(c['id'])}: {_shown(str(c['class']))} — "
                          f"{_shown(c['reason'])}")
        if report.static_scan is not None:
            _print_scan(console, report)
        if report.contamination is not None:
            from mt_eval.contamination.run_check import summary_line

            console.print(f"    {_shown(summary_line(report.contamination))}")
        for problem in report.problems:
            colour = "red" if problem.severity == "error" else "yellow"
            where = problem.file if problem.path == "$" else f"{problem.file} {problem.path}"
            console.print(f"    [{colour}]{problem.severity}[/]: {_shown(where)}: {_shown(problem.message)}")
            if problem.hint:
                console.print(f"      [dim]fix:[/] {_shown(problem.hint)}")
    errors = sum(len(r.errors) for r in reports)
    warnings = sum(len(r.warnings) for r in reports)
    valid = sum(r.passed(strict=strict) for r in reports)
    why = " (--strict: a warning makes its plugin invalid)" if strict and warnings else ""
    console.print(f"{valid} of {len(reports)} plugin{'s' if len(reports) != 1 else ''} valid; "
                  f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}{why}")


def _shown(text: str) -> str:
    """Text taken from a plugin's files (a name, an id, a message quoting one) as the console may print it: what
    would act on a terminal (ESC, U+202E) written as its escape, and brackets not read as markup."""
    from rich.markup import escape

    from mt_eval.control_chars import escaped_for_terminal

    return escape(escaped_for_terminal(text))


def _reader_gone() -> None:
    """The reader of the report went away (``| head``): stopped as every command stops (rich's own way exits 1,
    which says a plugin is invalid)."""
    raise BrokenPipeError


def _print_scan(console: Any, report: PluginReport) -> None:
    scan = report.static_scan
    assert scan is not None
    covered = [f for f in scan.findings if f.covered_by is not None]
    console.print(f"    static scan: {scan.files_scanned} file{'s' if scan.files_scanned != 1 else ''}, "
                  f"{len(scan.findings)} finding{'s' if len(scan.findings) != 1 else ''}, {scan.errors} "
                  f"error{'s' if scan.errors != 1 else ''}")
    for finding in covered:
        console.print(f"      {_shown(finding.file)}:{finding.line} {_shown(finding.what)} "
                      f"[dim]({finding.kind}, declared: {_shown(finding.covered_by or '')})[/]")
