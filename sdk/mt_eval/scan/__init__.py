"""Layer 2 of the fairness checks, the static scan: what a plugin's code can reach, and whether its
manifest declares it (`mt_eval.scan.findings` says what covers what).

``scan_plugin(directory, dependencies)`` reads every Python (``ast``) and JavaScript (tree-sitter) file of
the plugin except its tests — a test file the plugin's code imports is scanned too — and returns a
`ScanReport`; `scan_problems` turns its errors into `Problem`s for ``mt-eval validate``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from mt_eval.manifest import Dependency
from mt_eval.problems import Problem
from mt_eval.scan.findings import FIX, RawFinding, ScanFinding, ScanReport, cover

__all__ = ["ScanFinding", "ScanReport", "scan_plugin", "scan_problems"]

PYTHON = {".py"}
JAVASCRIPT = {".js", ".mjs", ".cjs"}
COMPILED = {".pyc"}  # (in __pycache__, Python reads one only in place of its own source, which is scanned)
SKIPPED_DIRECTORIES = {".git", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".bin"}
TEST_DIRECTORIES = {"tests", "test", "__tests__"}
TEST_FILE = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?js)$")
_PY_IMPORT = re.compile(r"^\s*(?:from\s+\.*([\w.]*)\s+import|import\s+([\w.]+))", re.M)
_JS_RELATIVE = re.compile(r"""(?:from\s*|require\s*\(\s*|import\s*\(\s*)['"](\.{1,2}/[^'"]+)['"]""")


def _code_files(directory: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """The plugin's code files, its test files (scanned only when the code imports them), and its compiled Python
    without source (``helper.pyc`` beside the code, which Python imports as ``helper``: unscannable)."""
    code: list[Path] = []
    tests: list[Path] = []
    compiled: list[Path] = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if SKIPPED_DIRECTORIES & set(relative.parts) or path.suffix not in PYTHON | JAVASCRIPT | COMPILED:
            continue
        if not path.is_file():
            continue
        if path.suffix in COMPILED:
            compiled.append(path)
            continue
        is_test = TEST_DIRECTORIES & set(relative.parts[:-1]) or TEST_FILE.match(path.name)
        (tests if is_test else code).append(path)
    return code, tests, compiled


def _links_out(directory: Path, scanned: Sequence[Path]) -> list[RawFinding]:
    """A file-access finding for each link in the plugin (a data file or a folder; a code file is read as code) that
    leads outside it: ``open(HERE / "data.json")`` through it reads what the link names, a path the code never says.
    The manifest and card the loader reads (and names when they cannot be read) are left to it."""
    from mt_eval.method_card import CARD_FILE, MANIFEST

    findings: list[RawFinding] = []
    links: list[Path] = []
    for folder, folders, names in os.walk(directory):  # (links are not followed; skipped folders not entered)
        folders[:] = [name for name in folders if name not in SKIPPED_DIRECTORIES]
        links += [Path(folder, name) for name in (*folders, *names) if os.path.islink(os.path.join(folder, name))]
    for path in sorted(links):
        relative = path.relative_to(directory)
        if path in scanned or relative.as_posix() in (MANIFEST, CARD_FILE):
            continue
        target = Path(os.path.realpath(path))  # (a looping link: where the loop stops, not an error)
        if not target.is_relative_to(directory):
            findings.append(RawFinding(relative.as_posix(), 1, "file-access",
                                       f"is a link to {target}, outside the plugin directory", str(target)))
    return findings


def _imported(files: Sequence[Path]) -> tuple[set[str], set[Path]]:
    """What ``files`` import: every Python module name and part of one (``import os, net_test``, ``from . import
    helper``, ``from tests import helper``), and every JavaScript module a relative specifier names (resolved)."""
    names: set[str] = set()
    paths: set[Path] = set()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:  # (reported by the scan itself)
            continue
        if path.suffix in PYTHON:
            names |= _python_imports(text)
        else:
            paths.update((path.parent / spec).resolve() for spec in _JS_RELATIVE.findall(text))
    return names, paths


def _python_imports(text: str) -> set[str]:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # (the scan reports the file as unscannable: its
        # imports as the regex sees them; RecursionError and MemoryError: nested deeper than the parser goes)
        return {part for match in _PY_IMPORT.finditer(text)
                for part in (match.group(1) or match.group(2) or "").split(".")}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.append(node.module)
            names.update(part for module in modules for part in module.split("."))
    return names


def _is_imported(test: Path, root: Path, names: set[str], paths: set[Path]) -> bool:
    """Whether the code imports the test file ``test``: by its module name or a package it is in (Python), or by
    its path, with or without its extension (JavaScript)."""
    if test.suffix in PYTHON:
        return bool({test.stem, *test.relative_to(root).parts[:-1]} & names)
    return test in paths or test.with_suffix("") in paths or test.parent in paths


def scan_plugin(directory: Path, dependencies: Sequence[Dependency] | None) -> ScanReport:
    """Scan the plugin in ``directory`` against its declared ``dependencies`` (None: no list declared)."""
    from mt_eval.scan.javascript_code import JavaScriptSyntaxError, scan_javascript
    from mt_eval.scan.python_code import scan_python

    root = directory.resolve()
    code, tests, compiled = _code_files(root)
    names, paths = _imported(code)
    files = code + [t for t in tests if _is_imported(t, root, names, paths)]
    raw: list[RawFinding] = []
    unscannable = [f"{path.relative_to(root).as_posix()}:1: compiled Python without its source (Python imports it "
                   "as a module; the scan cannot read what it does)" for path in compiled]
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
        except UnicodeDecodeError as exc:  # (the line, and the byte, where it stops being UTF-8)
            line = exc.object[:exc.start].count(b"\n") + 1
            unscannable.append(f"{relative}:{line}: cannot be read as UTF-8 text: byte 0x{exc.object[exc.start]:02x} "
                               f"is not UTF-8 ({exc.reason})")
        except ValueError as exc:
            unscannable.append(f"{relative}:1: cannot be read as UTF-8 text: {exc}")
        except (RecursionError, MemoryError):  # (the parser's or the scan's own limit on depth)
            unscannable.append(f"{relative}:1: code nested too deeply for the scan to parse (an expression, or a "
                               "chain of calls, attributes or operators, a thousand or more levels deep)")
        except OSError as exc:
            unscannable.append(f"{relative}:1: cannot be read: {exc.strerror or exc}")
    raw.extend(_links_out(root, files))
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
                                message=message.strip(), hint=_unscannable_fix(message)))
    return problems


def _unscannable_fix(message: str) -> str:
    """The fix for a file the scan cannot read, by why it cannot."""
    why = ("save it as UTF-8 (your editor's encoding setting; iconv -f latin1 -t utf-8 converts one)"
           if "UTF-8" in message else "ship the source" if "without its source" in message
           else "split what is nested too deeply into steps" if "nested too deeply" in message
           else "make it readable" if "cannot be read" in message else "fix the syntax")
    return f"{why}: code the scan cannot read is not accepted, since it could reach anything"
