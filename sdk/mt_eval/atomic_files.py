"""Writing a file whole or not at all: the content goes to a temporary file beside it, renamed over it once written.

A write cut short (a full disk, a quota, Ctrl-C) then leaves the file as it was, or no file, never a part of the
new one that a later read takes for the whole.
"""

from __future__ import annotations

import contextlib
import os
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
