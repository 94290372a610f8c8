"""``mt-eval validate``: every problem of a plugin at once, and the dependency class it earns."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.contamination.record import ContaminationRecord
from mt_eval.dependency_classes import CLASS_MEANING, Derivation
from mt_eval.loader import PluginSource, build_method, method_card_of, read_plugin, register_hooks
from mt_eval.problems import Problem
from mt_eval.scan import ScanReport

PYTHON_UNPARSEABLE = "Python the scan cannot parse"  # (how `mt_eval.scan` words a Python file it cannot parse)
PYTHON_SYNTAX_ERROR = re.compile(r"\bSyntaxError: .*\((?P<file>[^()]+):\d+\)$")  # (an import's, as the loader says it)


class PluginReport(msgspec.Struct, kw_only=True):
    """What `validate_plugin` found out about one plugin directory (``mt-eval validate --json``, and the Node
    package's validatePluginFiles)."""

    directory: str
    method_id: str | None = None
    name: str | None = None
    method_class: str | None = msgspec.field(default=None, name="class")
    runtime: str | None = None
    declared_class: str | None = None
    derived_class: str | None = None
    contributions: list[dict[str, Any]] = msgspec.field(default_factory=list)
    problems: list[Problem] = msgspec.field(default_factory=list)
    static_scan: ScanReport | None = None
    import_sandbox: str | None = None  # the tool that confined the import step, when it was confined
    contamination: ContaminationRecord | None = None  # with `mt-eval validate --corpus`

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def passed(self, *, strict: bool = False) -> bool:
        return not self.errors and not (strict and self.warnings)


class ValidateReport(msgspec.Struct, kw_only=True):
    """``mt-eval validate --json``: whether every plugin passed (warnings count under ``strict``), and each report."""

    ok: bool
    strict: bool
    plugins: list[PluginReport]


def validate_plugin(path: str | Path, *, run_code: bool = True, scan: bool = True, sandbox: bool = False,
                    timeout_s: float = 10.0, start_timeout_s: float = 30.0) -> PluginReport:
    """Check a plugin's files, scan its code (unless ``scan`` is false: `mt_eval.scan`) and, unless ``run_code``
    is false, start every entry point it declares — inside the sandbox with ``sandbox``
    (`mt_eval.validate.in_sandbox`): build its Python method, load its Node entry through the Node guest, start
    its command (each gets ``start_timeout_s`` to be built, or to answer initialize: `mt_eval.validate.start_limit`),
    and compare the two entries of a plugin that has both, ``timeout_s`` a step (`mt_eval.validate.entry_points`)."""
    from mt_eval.extensions import make_plugin_manager

    source, problems = read_plugin(path)
    report = PluginReport(directory=str(path), problems=problems)
    if source is None:
        return report
    manifest = source.manifest
    report.method_id = source.method_id
    report.name = manifest.name
    report.method_class = manifest.method_class
    report.runtime = source.runtime
    report.declared_class = manifest.dependency_class
    if not any(p.path.startswith("$.dependencies") and p.severity == "error" for p in problems):
        _add_derivation(report, source.derivation)
    if scan:
        from mt_eval.scan import scan_plugin, scan_problems

        report.static_scan = scan_plugin(source.directory, manifest.dependencies)
        problems.extend(scan_problems(source.directory, report.static_scan,
                                      declared=manifest.dependencies is not None))
    method = None
    entry_problem = any(p.path in ("$.entry_point", "$.node_entry", "$.command") and p.severity == "error"
                        for p in problems)
    if run_code and sandbox and not entry_problem:
        from mt_eval.validate.in_sandbox import sandboxed_import

        if source.runtime != "python":  # (a Python entry is validated whole in the sandbox, its card included)
            problems.extend(p for p in method_card_of(source, None)[1] if p not in problems)
            if _file_errors(source, problems):  # a guest refuses to start on them: they are the whole story
                return report
        report.import_sandbox, found = sandboxed_import(source, timeout_s=timeout_s, start_timeout_s=start_timeout_s)
        _drop_what_the_runtime_located(problems, found, source.directory)
        problems.extend(p for p in found if p not in problems)
        return report
    if run_code and source.runtime == "python" and not any(p.path == "$.entry_point" for p in problems):
        method, module, more = _built(source, start_timeout_s)
        _drop_what_the_runtime_located(problems, more, source.directory)
        problems.extend(more)
        if module is not None:
            problems.extend(register_hooks(module, source.method_id, make_plugin_manager()))
    _card, more = method_card_of(source, method)
    problems.extend(p for p in more if p not in problems)
    if run_code and not _file_errors(source, problems):  # the files are sound: start the other entry points too
        from mt_eval.validate.entry_points import check_entry_points

        found = check_entry_points(source, method, timeout_s=timeout_s, start_timeout_s=start_timeout_s)
        _drop_what_the_runtime_located(problems, found, source.directory)
        seen = {(p.file, p.severity) for p in problems}  # (a problem said already is not repeated)
        problems.extend(p for p in found if (p.file, p.severity) not in seen)
    return report


def _built(source: PluginSource, start_timeout_s: float) -> tuple[object | None, Any, list[Problem]]:
    """`build_method` within ``start_timeout_s``: an import or constructor still running then is one problem."""
    from mt_eval.loader import entry_module_file
    from mt_eval.validate.entry_points import SLOW_START
    from mt_eval.validate.start_limit import StartOverran, start_limit

    file = entry_module_file(source)
    name = str(file.relative_to(source.directory)) if file is not None else str(source.manifest.entry_point)
    said = f"importing {name} did not finish within {start_timeout_s:g} s"
    hard = (f"mt-eval validate: {source.directory}: {said}, and did not stop when interrupted (blocked outside Python "
            "code, or catching the interruption)")
    with start_limit(start_timeout_s, source.directory, hard_message=hard) as limit:
        try:
            method, module, problems = build_method(source)
        except StartOverran:  # (between the plugin's code and the loader's catching it)
            method, module, problems = None, None, []
    if not limit.overran:
        return method, module, problems
    building = any(p.code == "constructor" for p in problems)
    if building:
        said = f"building the method ({source.manifest.entry_point}) did not finish within {start_timeout_s:g} s"
    where = f": it was still running {limit.where}" if limit.where else ""
    what = "in the constructor" if building else f"at import time (the top level of {name})"
    return None, module, [Problem(file=source.manifest_file, path="$.entry_point", code="entry-point",
                                  message=f"{said}{where}", hint=SLOW_START.format(what=what))]


def _drop_what_the_runtime_located(problems: list[Problem], started: list[Problem], directory: Path) -> None:
    """Remove the scan's "cannot parse" of each file the runtime could not load for its syntax: one error per syntax
    error, in the runtime's words — Node's at its line (tree-sitter recovers differently, and may name an earlier
    line), Python's import naming ``(FILE:LINE)`` with the command that shows the whole traceback."""
    from mt_eval.scan.javascript_code import UNPARSEABLE

    located = {p.file.rpartition(":")[0] for p in started
               if p.code == "entry-point" and p.message.startswith("SyntaxError")}
    located |= {str(directory / found["file"]) for p in started
                if p.code == "entry-point" and (found := PYTHON_SYNTAX_ERROR.search(p.message))}
    problems[:] = [p for p in problems if not (p.code == "unscannable" and p.message.startswith(
        (UNPARSEABLE, PYTHON_UNPARSEABLE)) and p.file.rpartition(":")[0] in located)]


def _file_errors(source: PluginSource, problems: list[Problem]) -> bool:
    return any(p.severity == "error" and p.file in (source.manifest_file, source.card_file) for p in problems)


def _add_derivation(report: PluginReport, derivation: Derivation) -> None:
    report.derived_class = derivation.dependency_class
    report.contributions = [
        {"path": c.path, "id": c.dependency_id, "class": c.dependency_class, "reason": c.reason}
        for c in derivation.contributions
    ]


def describe_class(report: PluginReport) -> str:
    if report.derived_class is None:
        return "dependency class undeclared"
    return f"dependency class {report.derived_class} ({CLASS_MEANING[report.derived_class]})"  # type: ignore[index]
