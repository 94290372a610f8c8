"""Listing a bundle's files: every regular file once, and a finding for everything else.

Symbolic links are never followed: one leaving the bundle is reported (the check cannot vouch for what
it points to, so the verdict cannot be "clean"); one to a file or directory inside the bundle is noted,
since its target is read under its own path. Two kinds of file are not read as files, by what they are rather
than where they are: the compiled ``.pyc`` files of a ``__pycache__`` directory (noted), and the object store of
a real repository: a git repository's (``objects`` beside ``HEAD`` and ``refs``, in ``.git`` or a bare
repository) is read through git instead (`git_history`, listed in ``repositories``); ``.hg/store`` and
``.svn/pristine``, the compressed history of the files checked out beside them, are noted. Everything else in
those directories is read, so a method cannot hide a file by naming its directory ``__pycache__`` or ``.git``.
Pipes, sockets and devices are not read (noted); a directory that cannot be listed is reported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from mt_eval.contamination.git_history import is_repository
from mt_eval.contamination.report import Finding
from mt_eval.lone_surrogates import writable

# a repository's directory → (the file that shows it is one, its object store); git's: `git_history.MARKS`
REPOSITORIES = {".hg": ("requires", "store"), ".svn": ("wc.db", "pristine")}


def not_read(directory: str, names: list[str]) -> set[str]:
    """The ``names`` in ``directory`` that are skipped (see the module docstring); also ``shutil.copytree``'s
    ``ignore``."""
    base = os.path.basename(directory.rstrip(os.sep))
    if base == "__pycache__":
        return {name for name in names if name.endswith(".pyc")}
    if is_repository(Path(directory), set(names)):
        return {"objects"}
    repository = REPOSITORIES.get(base)
    if repository is not None and repository[0] in names and repository[1] in names:
        return {repository[1]}
    return set()


def _why_not_read(directory: str, name: str) -> str:
    if os.path.basename(directory.rstrip(os.sep)) == "__pycache__":
        return "compiled Python (the .py files it was compiled from are read)"
    return "the repository's object store (its compressed history; the files checked out beside it are read)"


def walk_bundle(root: Path, findings: list[Finding], repositories: list[tuple[Path, str]] | None = None
                ) -> Iterator[tuple[Path, str]]:
    """``(path, path relative to root)`` of every regular file under ``root``, in sorted order; each git
    repository whose object store is not read as files is added to ``repositories`` (its directory, and that
    relative to root)."""
    real_root = os.path.realpath(root)
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            findings.append(Finding(file=prefix.rstrip("/") or ".", kind="unreadable", effect="unverified",
                                    message=f"cannot list this directory: {exc.strerror or exc}"))
            continue
        subdirectories = []
        skipped = not_read(str(directory), [entry.name for entry in entries])
        for entry in entries:
            relative = prefix + writable(entry.name)  # (a name that is not UTF-8 shown with its escapes)
            try:
                if entry.name in skipped and not entry.is_symlink() and entry.name == "objects":
                    if repositories is not None:
                        repositories.append((Path(directory), prefix.rstrip("/") or "."))
                elif entry.name in skipped and not entry.is_symlink():
                    findings.append(Finding(file=relative, kind="skipped",
                                            message=f"not read: {_why_not_read(str(directory), entry.name)}"))
                elif entry.is_symlink():
                    findings.append(_symlink_finding(Path(entry.path), relative, real_root))
                elif entry.is_dir(follow_symlinks=False):
                    subdirectories.append((Path(entry.path), relative + "/"))
                elif entry.is_file(follow_symlinks=False):
                    yield Path(entry.path), relative
                else:
                    findings.append(Finding(file=relative, kind="special",
                                            message="not a regular file (a pipe, socket or device): not read"))
            except OSError as exc:
                findings.append(Finding(file=relative, kind="unreadable", effect="unverified",
                                        message=f"cannot inspect it: {exc.strerror or exc}"))
        pending.extend(reversed(subdirectories))


def _symlink_finding(path: Path, relative: str, real_root: str) -> Finding:
    try:
        pointed = writable(os.readlink(path))
    except OSError:
        pointed = "?"
    target = os.path.realpath(path)
    inside = target == real_root or target.startswith(real_root.rstrip(os.sep) + os.sep)
    if not inside:
        return Finding(file=relative, kind="symlink-outside", effect="unverified",
                       message=f"symbolic link to {pointed}, outside the bundle: not followed, so not checked")
    if not os.path.exists(target):
        return Finding(file=relative, kind="symlink", message=f"broken symbolic link to {pointed}: nothing to read")
    what = "directory" if os.path.isdir(target) else "file"
    shown = writable(os.path.relpath(target, real_root))
    return Finding(file=relative, kind="symlink",
                   message=f"symbolic link to the {what} {shown} inside the bundle: not followed (read as {shown})")
