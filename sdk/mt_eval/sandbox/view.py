"""What a sandboxed method sees of the file system: its plugin and its runtime, read-only; a private
``/tmp``; nothing else.

Everything else is *locked*, not merely absent: each name the host has at ``/``, in ``/etc`` and beside
every exposed directory is there, unreadable (mode 000) and read-only — a directory where the host has one, an
empty file where it has a file (`locked_files`) — so an attempt to read ``/etc/passwd`` or ``~/.ssh`` fails with
"Permission denied" and one to write ``/etc/passwd`` with "Read-only file system" (not "Is a directory"): errors the
method cannot mistake for a missing file and the harness can recognise and record (`mt_eval.sandbox.denials`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM = ("/usr",)  # read-only for every runtime (programs, libraries, shared data)
MERGED_USR = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")  # often symlinks into /usr
PRIVATE = ("/tmp", "/proc", "/dev")  # the sandbox's own: never locked
ETC_ALWAYS = ("/etc/ld.so.cache", "/etc/ssl/openssl.cnf", "/etc/ssl/certs", "/etc/ca-certificates",
              "/etc/alternatives", "/etc/localtime")
ETC_NETWORK = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf")
LOCK_LIMIT = 512  # names locked per directory at most (a huge directory is left absent beyond that)


@dataclass
class FileSystemView:
    """Read-only paths (each at its own path inside), the symlinks of a merged /usr, and locked names."""

    read_only: list[str] = field(default_factory=list)
    symlinks: list[tuple[str, str]] = field(default_factory=list)  # (target, link)
    locked: list[str] = field(default_factory=list)
    locked_files: set[str] = field(default_factory=set)  # those of them that are not directories on the host


def python_runtime() -> list[str]:
    """What ``python -m mt_eval.cli serve`` needs: the interpreter's prefixes, the venv, the SDK's package and
    what its ``site-packages`` add to the import path — of each directory a ``.pth`` file names (an editable
    install), only what can be imported from it (`importable_in`), and each path an editable install's finder maps
    a package to. Never the rest of such a directory: a ``.pth`` naming a project root, a home directory or ``/``
    would otherwise show the method every corpus, earlier run and file kept there."""
    from mt_eval.resources import PACKAGE

    paths = {sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent), str(PACKAGE.resolve())}
    for site in _site_directories():
        for directory in _pth_directories(site):
            paths.update(importable_in(directory))
        paths.update(_finder_mapped(site))
    return sorted(paths)


def _site_directories() -> list[str]:
    """The import path's directories inside the interpreter's prefixes (``site-packages``: their ``.pth`` files
    are read at start)."""
    prefixes = [p.rstrip("/") + "/" for p in {sys.prefix, sys.base_prefix}]
    return [entry for entry in sys.path if entry and os.path.isabs(entry) and os.path.isdir(entry)
            and any((entry.rstrip("/") + "/").startswith(p) for p in prefixes)]


def _pth_directories(site: str) -> list[str]:
    """The directories ``site``'s ``.pth`` files add to the import path, as ``site`` reads them: one a line,
    relative to ``site`` unless absolute, skipping comments and the lines it runs (``import ...``)."""
    found: list[str] = []
    for pth in sorted(Path(site).glob("*.pth")):
        try:
            lines = pth.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.rstrip()
            if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            directory = os.path.normpath(os.path.join(site, line))
            if os.path.isdir(directory) and directory not in found:
                found.append(directory)
    return found


def importable_in(directory: str) -> list[str]:
    """What ``import`` can take from ``directory`` on the import path, each a path to expose: its packages (a
    directory holding ``__init__.py``), its modules (source, bytecode, extension) and its distributions' metadata
    (``*.dist-info``, ``*.egg-info``: versions, entry points). Not a namespace package (a directory without
    ``__init__.py``), which would be any directory there: ``--sandbox-ro`` shows one a method needs."""
    from importlib.machinery import all_suffixes

    suffixes = sorted(all_suffixes(), key=len, reverse=True)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    shown: list[str] = []
    for name in names:
        path = os.path.join(directory, name)
        if name.endswith((".dist-info", ".egg-info")):
            shown.append(path)
        elif os.path.isdir(path):
            if name.isidentifier() and os.path.isfile(os.path.join(path, "__init__.py")):
                shown.append(path)
        elif any(name.endswith(suffix) and name[:-len(suffix)].isidentifier() for suffix in suffixes):
            shown.append(path)
    return shown


def _finder_mapped(site: str) -> list[str]:
    """The paths an editable install's import finder (setuptools' ``__editable___*_finder.py``, which maps each
    package it installs to its directory in the project) maps packages to."""
    import ast

    found: list[str] = []
    for finder in sorted(Path(site).glob("__editable___*_finder.py")):
        try:
            tree = ast.parse(finder.read_text(errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            target: ast.expr
            value: ast.expr | None
            if isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id == "MAPPING" and value is not None:
                try:
                    mapping = ast.literal_eval(value)
                except ValueError:
                    continue
                if isinstance(mapping, dict):
                    found += [str(p) for p in mapping.values() if isinstance(p, str) and os.path.isabs(p)
                              and os.path.exists(p)]
    return found


def node_runtime(node: str) -> list[str]:
    """The ``node`` program itself (symlinks followed): it needs nothing else of its installation, whose
    directory may hold more than Node (a node in ``~/bin`` would otherwise show the whole home directory)."""
    found = shutil.which(node)
    if found is None:
        return []
    return [str(Path(found).resolve())]


def build_view(exposed: list[str], *, network: bool, mounted: tuple[str, ...] = (),
               hidden: Sequence[str] = ()) -> FileSystemView:
    """The view exposing ``exposed`` (absolute paths) plus the system and the /etc files a runtime needs;
    ``mounted`` are paths the sandbox mounts from elsewhere (never locked); ``hidden`` are files locked even
    where they lie inside an exposed directory (the corpus a run scores the method on, kept in its plugin)."""
    view = FileSystemView()
    for name in MERGED_USR:
        path = Path("/") / name
        if path.is_symlink():
            view.symlinks.append((os.readlink(path), str(path)))
        elif path.is_dir():
            view.read_only.append(str(path))
    etc = [p for p in (*ETC_ALWAYS, *(ETC_NETWORK if network else ())) if os.path.exists(p)]
    wanted = _minimal([*SYSTEM, *(str(Path(p).resolve()) for p in exposed if os.path.exists(p))])
    view.read_only += wanted + etc
    view.locked = _locked_names([*wanted, *etc, *mounted, *(link for _, link in view.symlinks)])
    for file in sorted({str(Path(p).resolve()) for p in hidden if os.path.isfile(p)}):
        if file not in view.locked and any(file.startswith(shown.rstrip("/") + "/") for shown in view.read_only):
            view.locked.append(file)  # (after the exposed directory it lies in: it covers the file there)
    view.locked_files = {path for path in view.locked if not os.path.isdir(path)}
    return view


def _minimal(paths: list[str]) -> list[str]:
    """Paths without those already inside another one, in order."""
    out: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in out):
            out.append(path)
    return sorted(out)


def _locked_names(visible: list[str]) -> list[str]:
    """Every host name beside the path to a visible one (at /, in /etc, along each exposed directory's
    ancestors), except those on such a path and the sandbox's private directories."""
    keep: set[str] = {"/"}
    for path in visible:
        parts = Path(path).parts
        keep.update(str(Path(*parts[:i])) for i in range(1, len(parts) + 1))
    parents = sorted({str(Path(p).parent) for p in keep if p != "/"} | {"/", "/etc"})
    locked: list[str] = []
    for parent in parents:
        if parent in keep and any(parent == p or parent.startswith(p + "/") for p in visible if p != parent):
            continue  # inside a visible directory: its real content is there
        if parent.startswith(PRIVATE) or not os.path.isdir(parent):
            continue
        try:
            names = sorted(os.listdir(parent))[:LOCK_LIMIT]
        except OSError:
            continue
        for name in names:
            path = str(Path(parent) / name)
            if path not in keep and not path.startswith(PRIVATE):
                locked.append(path)
    return locked


RUN_STATE = "run.json"  # what every run writes first in its directory (with its "run_id")
CARD_MARK = b'"card_version"'  # what every card (run, decision, grading) begins with
UNWALKED = {".git", "node_modules", "__pycache__"}  # never a run's place, and often large


def earlier_runs(path: str) -> list[str]:
    """The files of earlier runs at ``path`` (a file or a directory tree): every file of a run directory (one holding
    a run's ``run.json``; its card holds the canaries' references and which entries are canaries and negative
    controls, its results the predictions) and every run card kept elsewhere (a JSON file holding
    ``"card_version"`` first). A sandboxed method is never to read them."""
    found: list[str] = []
    if os.path.isfile(path):
        run = os.path.dirname(path)
        return [path] if _is_card(path) or _is_run_state(os.path.join(run, RUN_STATE)) else []
    for directory, subdirectories, files in os.walk(path):
        subdirectories[:] = sorted(name for name in subdirectories if name not in UNWALKED)
        if RUN_STATE in files and _is_run_state(os.path.join(directory, RUN_STATE)):
            found += [os.path.join(directory, name) for name in sorted(files)]
        else:
            found += [os.path.join(directory, name) for name in sorted(files)
                      if name.endswith(".json") and _is_card(os.path.join(directory, name))]
    return found


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read(256)
    except OSError:
        return b""


def _is_run_state(path: str) -> bool:
    return os.path.isfile(path) and b'"run_id"' in _head(path)


def _is_card(path: str) -> bool:
    head = _head(path).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and head[1:].lstrip().startswith(CARD_MARK)
