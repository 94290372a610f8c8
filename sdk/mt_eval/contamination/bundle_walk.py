"""Listing a bundle's files: every regular file once, and a finding for everything else.

Symbolic links are never followed: one leaving the bundle is reported (the check cannot vouch for what
it points to, so the verdict cannot be "clean"); one to a file or directory inside the bundle is noted,
since its target is read under its own path. Version-control data and Python's compiled caches are
skipped (noted); pipes, sockets and devices are not read (noted); a directory that cannot be listed is
reported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from mt_eval.contamination.report import Finding
from mt_eval.lone_surrogates import writable

SKIPPED_DIRECTORIES = {
    ".git": "version-control data",
    ".hg": "version-control data",
    ".svn": "version-control data",
    "__pycache__": "compiled Python (the .py files beside it are read)",
}


def walk_bundle(root: Path, findings: list[Finding]) -> Iterator[tuple[Path, str]]:
    """``(path, path relative to root)`` of every regular file under ``root``, in sorted order."""
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
        for entry in entries:
            relative = prefix + writable(entry.name)  # (a name that is not UTF-8 shown with its escapes)
            try:
                if entry.is_symlink():
                    findings.append(_symlink_finding(Path(entry.path), relative, real_root))
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name in SKIPPED_DIRECTORIES:
                        findings.append(Finding(file=relative, kind="skipped",
                                                message=f"not read: {SKIPPED_DIRECTORIES[entry.name]}"))
                    else:
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
        pointed = os.readlink(path)
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
    shown = os.path.relpath(target, real_root)
    return Finding(file=relative, kind="symlink",
                   message=f"symbolic link to the {what} {shown} inside the bundle: not followed (read as {shown})")
