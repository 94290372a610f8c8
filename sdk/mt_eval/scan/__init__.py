"""Layer 2 of the fairness checks, the static scan: what a plugin's code can reach, and whether its
manifest declares it (`mt_eval.scan.findings` says what covers what).

``scan_plugin(directory, dependencies)`` reads every Python (``ast``) and JavaScript (tree-sitter) file of
the plugin except its tests — a test file the plugin's code imports is scanned too — and returns a
`ScanReport`; `scan_problems` turns its errors into `Problem`s for ``mt-eval validate``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from mt_eval.manifest import Dependency
from mt_eval.problems import Problem
from mt_eval.scan.findings import FIX, RawFinding, ScanFinding, ScanReport, cover

__all__ = ["ScanFinding", "ScanReport", "scan_plugin", "scan_problems"]

PYTHON = {".py"}
JAVASCRIPT = {".js", ".mjs", ".cjs"}
SKIPPED_DIRECTORIES = {".git", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".bin"}
TEST_DIRECTORIES = {"tests", "test", "__tests__"}
TEST_FILE = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?js)$")
_PY_IMPORT = re.compile(r"^\s*(?:from\s+\.*([\w.]*)\s+import|import\s+([\w.]+))", re.M)
_JS_RELATIVE = re.compile(r"""(?:from\s*|require\s*\(\s*|import\s*\(\s*)['"](\.{1,2}/[^'"]+)['"]""")


def _code_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """The plugin's code files, and its test files (scanned only when the code imports them)."""
    code: list[Path] = []
    tests: list[Path] = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if SKIPPED_DIRECTORIES & set(relative.parts) or path.suffix not in PYTHON | JAVASCRIPT:
            continue
        if not path.is_file():
            continue
        is_test = TEST_DIRECTORIES & set(relative.parts[:-1]) or TEST_FILE.match(path.name)
        (tests if is_test else code).append(path)
    return code, tests


def _imported_names(files: Sequence[Path]) -> set[str]:
    names: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in PYTHON:
            for match in _PY_IMPORT.finditer(text):
                names.update((match.group(1) or match.group(2) or "").split("."))
        else:
            names.update(Path(spec).stem for spec in _JS_RELATIVE.findall(text))
    return names


def scan_plugin(directory: Path, dependencies: Sequence[Dependency] | None) -> ScanReport:
    """Scan the plugin in ``directory`` against its declared ``dependencies`` (None: no list declared)."""
    from mt_eval.scan.javascript_code import JavaScriptSyntaxError, scan_javascript
    from mt_eval.scan.python_code import scan_python

    root = directory.resolve()
    code, tests = _code_files(root)
    imported = _imported_names(code)
    files = code + [t for t in tests if t.stem.partition(".")[0] in imported]
    raw: list[RawFinding] = []
    unscannable: list[str] = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        target = path.resolve()
        if not target.is_relative_to(root):
            raw.append(RawFinding(relative, 1, "file-access", f"is a link to {target}, outside the plugin directory",
                                  str(target)))
            continue
        try:
            text = path.read_text(encoding="utf-8")
            raw.extend(scan_python(text, relative) if path.suffix in PYTHON else scan_javascript(text, relative))
        except SyntaxError as exc:
            unscannable.append(f"{relative}:{exc.lineno or 1}: Python the scan cannot parse: {exc.msg}")
        except JavaScriptSyntaxError as exc:
            unscannable.append(f"{relative}:{exc.line}: {exc}")
        except (UnicodeDecodeError, ValueError) as exc:
            unscannable.append(f"{relative}:1: cannot be read as UTF-8 text: {exc}")
    findings = cover(raw, dependencies)
    errors = sum(f.covered_by is None for f in findings) + len(unscannable)
    return ScanReport(findings=findings, errors=errors, files_scanned=len(files), unscannable=unscannable)


def scan_problems(directory: Path, report: ScanReport, *, declared: bool) -> list[Problem]:
    """The scan's errors as problems (``file:line``), each with its fix."""
    problems = []
    for finding in report.findings:
        if finding.covered_by is None:
            why = "no declared dependency covers it" if declared else \
                'method.json declares no "dependencies" list, so nothing covers it'
            problems.append(Problem(file=f"{directory / finding.file}:{finding.line}", path="$", code="undeclared",
                                    message=f"{finding.what} [{finding.kind}]: {why}", hint=FIX[finding.kind]))
    for entry in report.unscannable:
        file, line, message = entry.split(":", 2)
        problems.append(Problem(file=f"{directory / file}:{line}", path="$", code="unscannable",
                                message=message.strip(), hint="fix the syntax: code the scan cannot read is not "
                                "accepted, since it could reach anything"))
    return problems
