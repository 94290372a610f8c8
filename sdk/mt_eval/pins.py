"""Pins are checked, not only required: before a run, every pin the harness can check is compared with what the
run would use, and a mismatch refuses the run.

A mirrored dependency's ``pin`` is checked when its ``source`` says where to look — its first word:

=======================================  ========================================================================
``source`` starts with                   checked against ``pin``
=======================================  ========================================================================
a path to a file or directory            ``sha256:HEX``: the file's SHA-256 (a directory: the tree hash the run
(relative to the plugin directory,       card's ``code_sha256`` uses); a path that does not exist is missing
or ``file:PATH``)
``deb:NAME``                             the installed Debian package's version (``3.8.3`` also matches
                                         ``3.8.3-1+b2``: any Debian revision of that upstream version)
``pypi:NAME``                            the installed Python distribution's version
``npm:NAME``                             the version in ``node_modules/NAME/package.json``, looked up from the
                                         plugin directory upwards
=======================================  ========================================================================

Anything else (a URL, prose) cannot be checked here and is recorded as ``unverifiable`` in the run card.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

if TYPE_CHECKING:
    from mt_eval.loader import PluginSource

PinStatus = Literal["verified", "mismatch", "missing", "unverifiable"]
_PACKAGE = re.compile(r"^(deb|pypi|npm):(\S+)$")


class PinCheck(msgspec.Struct, kw_only=True):
    """What checking one dependency's pin found."""

    id: str
    pin: str
    checked: str | None  # what was compared: "file fst/x.att", "Debian package apertium", ...
    status: PinStatus
    found: str | None = None  # the hash or version found
    fix: str | None = None

    def problem(self) -> str:
        """One line saying what differs and how to fix it."""
        state = (f"is {self.found}" if self.status == "mismatch"
                 else "does not exist" if (self.checked or "").startswith("file") else "is not installed")
        return f"{self.id}: pins {self.pin}, but {self.checked} {state}" + (f"; fix: {self.fix}" if self.fix else "")


def check_pins(source: PluginSource) -> list[PinCheck]:
    """Every mirrored dependency's pin, checked where its source says (see the module docstring)."""
    checks = []
    for dep in source.manifest.dependencies or ():
        if dep.access == "mirrored" and dep.pin:
            checks.append(_check(dep.id, dep.pin, dep.source, source.directory))
    return checks


def refusals(checks: list[PinCheck]) -> list[PinCheck]:
    return [c for c in checks if c.status in ("mismatch", "missing")]


def pinned_copies(source: PluginSource) -> list[tuple[str, Path]]:
    """Where the copy of each mirrored dependency pinned by its sha256 is, with its id (`_pinned_path`)."""
    return [(dep.id, path) for dep in source.manifest.dependencies or ()
            if dep.access == "mirrored" and dep.pin and (path := _pinned_path(dep.pin, dep.source, source.directory))]


def _pinned_path(pin: str, source: str, directory: Path) -> Path | None:
    """The file or directory ``source`` names, when a sha256 ``pin`` is checked against it (not a package)."""
    word = source.split()[0] if source.split() else ""
    path_text = word.removeprefix("file:")
    looks_like_path = word.startswith("file:") or ("://" not in word and ("/" in word or "." in word))
    if _PACKAGE.match(word) or not pin.lower().startswith("sha256:") or not looks_like_path:  # ("SHA256:" too)
        return None
    return Path(path_text) if Path(path_text).is_absolute() else directory / path_text


def _check(dep_id: str, pin: str, source: str, directory: Path) -> PinCheck:
    word = source.split()[0] if source.split() else ""
    package = _PACKAGE.match(word)
    if package:
        kind, name = package.groups()
        return _package(dep_id, pin, kind, name, directory)
    path = _pinned_path(pin, source, directory)
    if path is None:
        return PinCheck(id=dep_id, pin=pin, checked=None, status="unverifiable")
    checked = f"file {word.removeprefix('file:')}"
    if not path.exists():
        return PinCheck(id=dep_id, pin=pin, checked=checked, status="missing",
                        fix=f"put the pinned copy at {path}, or correct \"source\"")
    found = "sha256:" + (_file_sha256(path) if path.is_file() else _tree_sha256(path))
    if found.lower() != pin.lower():
        return PinCheck(id=dep_id, pin=pin, checked=checked, status="mismatch", found=found,
                        fix="restore the pinned copy, or review this one and update the pin")
    return PinCheck(id=dep_id, pin=pin, checked=checked, status="verified", found=found)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tree_sha256(path: Path) -> str:
    from mt_eval.code_hash import code_sha256

    return code_sha256(path)


def _package(dep_id: str, pin: str, kind: str, name: str, directory: Path) -> PinCheck:
    what = {"deb": "Debian package", "pypi": "Python package", "npm": "npm package"}[kind]
    checked = f"the installed {what} {name}"
    version = {"deb": _deb_version, "pypi": _pypi_version, "npm": _npm_version}[kind](name, directory)
    if version is None:
        return PinCheck(id=dep_id, pin=pin, checked=checked, status="unverifiable")  # no way to ask here
    install = {"deb": f"apt-get install {name}={pin}", "pypi": f"pip install {name}=={pin}",
               "npm": f"npm install {name}@{pin}"}[kind]
    if version == "":
        return PinCheck(id=dep_id, pin=pin, checked=checked, status="missing", fix=install)
    wanted = pin.removeprefix("==").removeprefix("v")
    matches = wanted in (_deb_forms(version) if kind == "deb" else {version, version.removeprefix("v")})
    if not matches:
        return PinCheck(id=dep_id, pin=pin, checked=checked, status="mismatch", found=version,
                        fix=f"{install}, or review {version} and update the pin")
    return PinCheck(id=dep_id, pin=pin, checked=checked, status="verified", found=version)


def _deb_forms(version: str) -> set[str]:
    """A Debian version and the shorter forms a pin may use: without epoch, binNMU suffix, or revision."""
    plain = version.split(":", 1)[-1]
    no_bin = re.sub(r"\+b\d+$", "", plain)
    return {version, plain, no_bin, no_bin.rsplit("-", 1)[0]}


def _deb_version(name: str, _directory: Path) -> str | None:
    """The installed version, "" when not installed, None when dpkg-query is not there to ask."""
    dpkg_query = shutil.which("dpkg-query")
    if dpkg_query is None:
        return None
    try:
        done = subprocess.run([dpkg_query, "-W", "-f", "${db:Status-Abbrev}|${Version}", name], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    status, _, version = done.stdout.partition("|")
    return version.strip() if done.returncode == 0 and status.startswith("ii") else ""


def _pypi_version(name: str, _directory: Path) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return ""


def _npm_version(name: str, directory: Path) -> str:
    for folder in [directory.resolve(), *directory.resolve().parents]:
        package = folder / "node_modules" / name / "package.json"
        if package.is_file():
            try:
                return str(json.loads(package.read_text(encoding="utf-8")).get("version") or "")
            except (OSError, ValueError):
                return ""
    return ""
