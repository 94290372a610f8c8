"""What the static scan reports, and which declared dependency covers each finding.

A finding is something a method's code can reach beyond its own directory: the network, a download, a
program, dynamic code, or a file outside the plugin. Each must be covered by a dependency the manifest
declares; an uncovered finding is an error, whatever class the method would otherwise earn.

| finding | covered by a dependency that |
|---|---|
| ``network`` | is reached through the ``gateway`` or an ``external-api`` |
| ``download`` | is ``mirrored`` (a pinned copy) ``data`` or ``model`` |
| ``subprocess`` | is ``software`` (the program it runs) |
| ``file-access`` (outside the plugin) | is ``mirrored``, or is ``software`` |
| ``dynamic-code`` | is bundled ``software`` holding the file (its ``source`` folder, or ``node_modules/<id>``) |

Among the dependencies that admit a finding, one whose id or source names what the finding names (the
module, program, host or path) is preferred; otherwise the first in manifest order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

import msgspec

from mt_eval.manifest import Dependency

Kind = Literal["network", "download", "subprocess", "dynamic-code", "file-access"]
KINDS: tuple[Kind, ...] = ("network", "download", "subprocess", "dynamic-code", "file-access")

FIX: dict[str, str] = {
    "network": 'declare what it reaches: a dependency with "access": "gateway" (an LLM behind the gateway) or '
               '"external-api"; or remove the network use',
    "download": 'declare the artifact as a "mirrored" dependency with its "pin", and read the mirrored copy '
                "instead of downloading it at run time",
    "subprocess": 'declare the program as a dependency with "kind": "software"',
    "file-access": 'keep the file in the plugin directory, or declare it as a "mirrored" dependency (or the '
                   'program that owns it as "software")',
    "dynamic-code": "import modules by name and call functions directly, so the scan sees what the method "
                    'reaches (vendored code: declare it as bundled "software" whose "source" is its folder)',
}


class ScanFinding(msgspec.Struct, kw_only=True):
    """One thing the code reaches: where (file relative to the plugin, line), what, and what covers it."""

    file: str
    line: int
    kind: Kind
    what: str
    covered_by: str | None = None


class ScanReport(msgspec.Struct, kw_only=True):
    """The static scan of one plugin: every finding, and how many are errors (uncovered or unscannable)."""

    findings: list[ScanFinding] = msgspec.field(default_factory=list)
    errors: int = 0
    files_scanned: int = 0
    unscannable: list[str] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class RawFinding:
    """A finding before coverage: ``subject`` is what it names (module, program, host or path)."""

    file: str
    line: int
    kind: Kind
    what: str
    subject: str = ""


_ADMITS: dict[str, Callable[[Dependency, str], bool]] = {
    "network": lambda d, _file: d.access in ("gateway", "external-api"),
    "download": lambda d, _file: d.access == "mirrored" and d.kind in ("data", "model"),
    "subprocess": lambda d, _file: d.kind == "software",
    "file-access": lambda d, _file: d.access == "mirrored" or d.kind == "software",
    "dynamic-code": lambda d, file: d.kind == "software" and d.access == "bundled" and _holds(d, file),
}


def _holds(dependency: Dependency, file: str) -> bool:
    """Whether ``file`` (relative to the plugin) lies in the folder of a bundled software dependency."""
    roots = [f"node_modules/{dependency.id}"]
    source = dependency.source or ""
    if source and not source.startswith(("/", "http:", "https:")) and " " not in source:
        roots.append(source.rstrip("/"))
    path = PurePosixPath(file)
    return any(path == PurePosixPath(root) or PurePosixPath(root) in path.parents for root in roots)


def covering(finding: RawFinding, dependencies: Sequence[Dependency]) -> str | None:
    """The id of the declared dependency that covers ``finding``, or None."""
    admitted = [d for d in dependencies if _ADMITS[finding.kind](d, finding.file)]
    if not admitted:
        return None
    subject = finding.subject.lower()
    for dependency in admitted:
        names = [dependency.id.lower(), (dependency.source or "").lower()]
        if subject and any(subject in name or (name and name in subject) for name in names if name):
            return dependency.id
    return admitted[0].id


def cover(raw: Sequence[RawFinding], dependencies: Sequence[Dependency] | None) -> list[ScanFinding]:
    """Findings with ``covered_by`` filled in (never covered when the manifest declares no list)."""
    found = []
    for item in sorted(raw, key=lambda f: (f.file, f.line, f.kind, f.what)):
        by = covering(item, dependencies) if dependencies is not None else None
        found.append(ScanFinding(file=item.file, line=item.line, kind=item.kind, what=item.what, covered_by=by))
    return found
