"""Writing a file whole or not at all: the content goes to a temporary file beside it, renamed over it once written.

A write cut short (a full disk, a quota, Ctrl-C) then leaves the file as it was, or no file, never a part of the
new one that a later read takes for the whole; and a directory made for the file (`directory_for`) is removed
again when nothing could be written in it, so a full disk leaves no empty output directory behind.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path


def write_atomically(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` through a temporary file in its directory; what a failure raises propagates,
    and no temporary file is left behind."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())  # (on disk before it replaces the file: a power cut leaves one of the two)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def remove_leftovers(directory: Path, names: Iterable[str]) -> None:
    """Remove the temporary files of ``names`` (``.card.json.4242.tmp``) that `write_atomically` left in ``directory``
    when its process was killed outright (SIGKILL, a power cut) between making one and renaming it: nothing else
    removes them, and each is as large as the file it was to replace. Only for a directory the caller alone writes
    in (a run directory, under its lock); this process's own are kept."""
    pattern = re.compile("|".join(rf"\.{re.escape(name)}\.\d+\.tmp" for name in names))
    own = f".{os.getpid()}.tmp"
    try:
        with os.scandir(directory) as entries:
            left = [entry.path for entry in entries if pattern.fullmatch(entry.name) and not entry.name.endswith(own)]
    except OSError:  # (not there yet, or not readable: said by what reads it)
        return
    for path in left:
        with contextlib.suppress(OSError):  # (one that cannot be removed is harmless: it is never read)
            os.unlink(path)


@contextlib.contextmanager
def directory_for(directory: Path) -> Iterator[None]:
    """Make ``directory`` and its missing parents for what the block writes in it. When the block fails, the
    directories made here that are still empty are removed (the deepest first); one that was there before is
    kept, and so is one another process has written in meanwhile."""
    made: list[Path] = []
    try:
        for path in reversed([directory, *directory.parents]):
            if not path.is_dir():
                try:
                    path.mkdir()
                except FileExistsError:  # (made by another process just now: it is that process's)
                    continue
                made.append(path)
        yield
    except BaseException:
        for path in reversed(made):
            try:
                path.rmdir()
            except OSError:  # (not empty: what is in it is kept, and so are the directories above it)
                break
        raise
