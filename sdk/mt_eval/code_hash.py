"""A plugin's code hash: SHA-256 over the relative path and content of each of its files, in sorted order.

The run card records it (``method.code_sha256``), ``--resume`` refuses a plugin whose hash changed, pins of
vendored directories use it, and champollion's lock file folds it into the method fingerprint, so editing
the method re-sends what it translated.

It covers the method's code and data — every file of the plugin directory — and leaves out what is not the
method: version control (``.git``, ``.hg``, ``.svn``, ``.bzr``), caches and tool environments
(``__pycache__``, ``node_modules``, ``.venv``, ``.pytest_cache``, ``.mypy_cache``, ``.ruff_cache``, ``.tox``,
``.nox``), editor settings (``.idea``, ``.vscode``), run outputs (``runs/`` at the plugin's top), and files an
editor, a patch or the OS leaves behind (``*~``, ``*.swp``, ``#name#``, ``.#name``, ``*.bak``, ``*.orig``,
``*.pyc``, ``.DS_Store``, ``Thumbs.db``). A symlinked folder is not entered; a symlinked file counts, with its
target's content. The Node side (``bridge/node/lib/code-hash.js``) computes the same hash;
``bridge/vectors/champollion/hashing.json`` holds both to it. `git_state` is the other half of what identifies
the code: the commit of the repository holding it, and whether it has changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr", "__pycache__", "node_modules", ".venv",
                                 ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".idea", ".vscode"})
SKIPPED_AT_TOP = frozenset({"runs"})  # mt-eval run's default output folder, when a run was made from inside
SKIPPED_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
SKIPPED_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".bak", ".orig", ".pyc", ".pyo")


def skipped_file(name: str) -> bool:
    """Whether a file of this name is an editor's, a patch's or the OS's leftover, not the method's."""
    return (name in SKIPPED_FILES or name.endswith(SKIPPED_SUFFIXES) or name.startswith(".#")
            or (len(name) > 1 and name.startswith("#") and name.endswith("#")))


def hashed_files(directory: Path) -> list[tuple[str, ...]]:
    """The files the code hash covers, as path components relative to ``directory``, in hashing order."""
    root = directory.resolve()
    found: list[tuple[str, ...]] = []
    for folder, subfolders, files in os.walk(root):
        parts = Path(folder).relative_to(root).parts
        subfolders[:] = [d for d in subfolders if d not in SKIPPED_DIRECTORIES and not (not parts and d in
                                                                                        SKIPPED_AT_TOP)]
        found += [(*parts, name) for name in files if name not in SKIPPED_DIRECTORIES and not skipped_file(name)
                  and os.path.isfile(Path(folder, name))]  # a worktree's .git is a file
    return sorted(found)


def code_sha256(directory: Path) -> str:
    """SHA-256 over ``relative/path\\0content\\0`` of each file `hashed_files` lists."""
    digest = hashlib.sha256()
    root = directory.resolve()
    for parts in hashed_files(root):
        digest.update("/".join(parts).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(root.joinpath(*parts).read_bytes() + b"\0")
    return digest.hexdigest()


def written_since(directory: Path, started_at: str) -> list[str]:
    """The files `hashed_files` lists in ``directory`` modified since ``started_at`` (ISO 8601, recorded to the
    second: a file written within that second is not counted), as relative paths: what changed the code hash."""
    import datetime

    started = datetime.datetime.fromisoformat(started_at).timestamp() + 1
    return ["/".join(parts) for parts in hashed_files(directory)
            if directory.joinpath(*parts).stat().st_mtime >= started]


def git_state(directory: Path) -> tuple[str | None, bool | None]:
    """The commit of the repository holding ``directory`` and whether that directory has changes."""
    try:
        commit = subprocess.run(["git", "-C", str(directory), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10)
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(["git", "-C", str(directory), "status", "--porcelain", "--", "."],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    return commit.stdout.strip(), bool(status.stdout.strip())
