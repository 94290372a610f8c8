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
    """What ``python -m mt_eval.cli serve`` needs: the interpreter's prefixes, the venv, the SDK's sources and
    any directory an installed ``.pth`` file adds (editable installs)."""
    from mt_eval.resources import PACKAGE

    paths = {sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent),
             str(PACKAGE.resolve().parent)}
    for entry in sys.path:
        if entry and os.path.isabs(entry) and os.path.isdir(entry) and \
                any(entry.startswith(p) for p in (sys.prefix, sys.base_prefix)):
            for pth in Path(entry).glob("*.pth"):
                for line in pth.read_text(errors="replace").splitlines():
                    if line.startswith("/") and os.path.isdir(line.strip()):
                        paths.add(line.strip())
    return sorted(paths)


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
