"""A trial write: whether a directory can be written in — it and its missing parents made, a nameless file made in
it, then what was made removed — and, when it cannot, why in words with the fix (`mt_eval.harness.run_directory`
refuses ``--out`` with it before any work)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path


def unwritable(directory: Path, flag: str, given: Path | None = None) -> str | None:
    """Why ``directory`` (given as ``flag``; ``given``: the file to be written there) cannot be written in, with the
    fix; None when it can. It and its missing parents are made, and a nameless file in it, then what was made is
    removed.

    Another process may be doing the same at once (two runs started together, ``--out runs/a`` and
    ``--out runs/b``, where there is no ``runs`` yet): a parent it makes first is used as it is, and one it
    removes just before this process makes a directory in it is made again."""
    verb = "use" if given is None else "write"
    existing = directory  # (the directory that is there, in which the write is tried)
    for attempt in range(_ATTEMPTS):
        try:
            lineage = [directory, *directory.parents]
            first, is_dir = _first_existing(lineage)
            existing = lineage[first]
            if given is None:
                verb = "create" if first else "write to"
            if not is_dir:
                return (f"cannot {verb} {flag} {given or directory}: {lineage[first]} is a file, not a "
                        "directory")
            _make_and_write(lineage[:first], directory)
            return None
        except FileNotFoundError as exc:
            # (looked for only now: a look on every attempt widened the window in which another process's rmdir
            # makes this one's mkdir fail)
            if link := next((path for path in lineage[:first] if path.is_symlink()), None):
                return (f"cannot {verb} {flag} {given or directory}: {link} is a symbolic link to "
                        f"{os.readlink(link)}, which does not exist: make the directory it points to, or give "
                        f"{flag} another place")
            if attempt + 1 == _ATTEMPTS:
                return f"cannot {verb} {flag} {given or directory}: {exc.strerror or exc}"
        except OSError as exc:
            if exc.errno == errno.EROFS:  # (no chmod helps: the mount is read-only)
                return (f"cannot {verb} {flag} {given or directory}: it is on a file system mounted read-only; "
                        f"give {flag} a place on a writable file system")
            fix = permission_fix(existing, exc)
            return (f"cannot {verb} {flag} {given or directory}: {exc.strerror or exc}"
                    f"{f'; {fix}, or give {flag} another place' if fix else ''}")
    return None  # (not reached: the last attempt returns)


def permission_fix(path: Path, exc: OSError) -> str | None:
    """How to let this user write ``path`` when ``exc`` says the permissions (EACCES) or its attributes (EPERM: an
    immutable file or directory) refused it; None for any other error."""
    if exc.errno == errno.EACCES:
        return f"make it writable for you (chmod u+w {path})"
    if exc.errno == errno.EPERM:
        return f"clear its immutable flag (chattr -i {path})"
    return None


def _first_existing(lineage: list[Path]) -> tuple[int, bool]:
    """The index of the first of ``lineage`` that exists, and whether it is a directory (one look at it: another
    process may remove it at any time)."""
    for index, path in enumerate(lineage):
        try:
            return index, stat.S_ISDIR(path.stat().st_mode)
        except (FileNotFoundError, NotADirectoryError):
            continue
    return len(lineage) - 1, True  # (the root)


_ATTEMPTS = 100  # (a parent another process made and removed again: each time, a few system calls' window)


def _make_and_write(missing: list[Path], directory: Path) -> None:
    """Make the ``missing`` directories (the deepest first in the list: made last), a nameless file in
    ``directory``, then remove the directories this call made (not those another process made meanwhile)."""
    made: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                path.mkdir()
            except FileExistsError:
                if stat.S_ISDIR(path.stat().st_mode):  # (FileNotFoundError: removed again just now; tried again)
                    continue  # made by another process just now: it is that process's to remove
                raise
            made.append(path)
        with tempfile.TemporaryFile(dir=directory):
            pass
    finally:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                path.rmdir()
