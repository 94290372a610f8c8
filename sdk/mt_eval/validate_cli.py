"""Rendering ``mt-eval validate`` reports for people (rich text) and for CI (``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.validate import PluginReport, ValidateReport, describe_class, validate_plugin


def run_validate(plugins: Sequence[Path], *, as_json: bool, strict: bool, run_code: bool, scan: bool = True,
                 sandbox: bool = True, corpora: Sequence[Path] = (), timeout_s: float = 10.0) -> int:
    reports = [validate_plugin(path, run_code=run_code, scan=scan, sandbox=sandbox, timeout_s=timeout_s)
               for path in plugins]
    if corpora:
        from mt_eval.contamination.validation import check_reports

        try:
            check_reports(reports, corpora)
        except ValueError as exc:
            print(f"mt-eval validate: {exc}", file=sys.stderr)
            return 1
    ok = all(r.passed(strict=strict) for r in reports)
    if as_json:
        document = ValidateReport(ok=ok, strict=strict, plugins=reports)
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n")
    else:
        _print_reports(reports, strict=strict)
    return 0 if ok else 1


def _print_reports(reports: Sequence[PluginReport], *, strict: bool) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    for report in reports:
        passed = report.passed(strict=strict)
        mark = "[green]✓[/]" if passed else "[red]✗[/]"
        title = f"{report.method_id} ({report.method_class}, {report.runtime})" if report.method_id else ""
        console.print(f"{mark} [bold]{escape(report.directory)}[/]  {escape(title)}")
        if report.method_id:
            console.print(f"    {escape(describe_class(report))}")
        if report.import_sandbox:
            console.print(f"    [dim]entry point imported in the sandbox ({escape(report.import_sandbox)})[/]")
        for c in report.contributions:
            console.print(f"      {c['path']} {escape(c['id'])}: {c['class']} — {escape(c['reason'])}")
        if report.static_scan is not None:
            _print_scan(console, report)
        if report.contamination is not None:
            from mt_eval.contamination.run_check import summary_line

            console.print(f"    {escape(summary_line(report.contamination))}")
        for problem in report.problems:
            colour = "red" if problem.severity == "error" else "yellow"
            where = problem.file if problem.path == "$" else f"{problem.file} {problem.path}"
            console.print(f"    [{colour}]{problem.severity}[/]: {escape(where)}: {escape(problem.message)}")
            if problem.hint:
                console.print(f"      [dim]fix:[/] {escape(problem.hint)}")
    errors = sum(len(r.errors) for r in reports)
    warnings = sum(len(r.warnings) for r in reports)
    valid = sum(r.passed(strict=strict) for r in reports)
    console.print(f"{valid} of {len(reports)} plugin{'s' if len(reports) != 1 else ''} valid; "
                  f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}")


def _print_scan(console: Any, report: PluginReport) -> None:
    from rich.markup import escape

    scan = report.static_scan
    assert scan is not None
    covered = [f for f in scan.findings if f.covered_by is not None]
    console.print(f"    static scan: {scan.files_scanned} file{'s' if scan.files_scanned != 1 else ''}, "
                  f"{len(scan.findings)} finding{'s' if len(scan.findings) != 1 else ''}, {scan.errors} "
                  f"error{'s' if scan.errors != 1 else ''}")
    for finding in covered:
        console.print(f"      {escape(finding.file)}:{finding.line} {escape(finding.what)} "
                      f"[dim]({finding.kind}, declared: {escape(finding.covered_by or '')})[/]")
