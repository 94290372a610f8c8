"""A plugin's code hash: SHA-256 over the relative path and content of each of its files, in sorted order.

The run card records it (``method.code_sha256``), ``--resume`` refuses a plugin whose hash changed, pins of
vendored directories use it, and champollion's lock file folds it into the method fingerprint, so editing
the method re-sends what it translated. Files under ``__pycache__``, ``.git``, ``node_modules`` and the tool
caches are left out; a symlinked folder is not entered (a symlinked file counts, with its target's content).
The Node side (``bridge/node/lib/code-hash.js``) computes the same hash; ``bridge/vectors/champollion/
hashing.json`` holds both to it. `git_state` is the other half of what identifies the code: the commit of
the repository holding it, and whether it has changes.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

SKIPPED = frozenset({"__pycache__", ".git", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


def code_sha256(directory: Path) -> str:
    """SHA-256 over ``relative/path\\0content\\0`` of each file, sorted by path components."""
    digest = hashlib.sha256()
    root = directory.resolve()
    files = [p for p in root.rglob("*") if p.is_file() and not SKIPPED & set(p.relative_to(root).parts)]
    for path in sorted(files, key=lambda p: p.relative_to(root).parts):
        digest.update("/".join(path.relative_to(root).parts).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


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
