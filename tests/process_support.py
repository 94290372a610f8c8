"""Finding the processes a test started, by a marker in their environment (children and grandchildren
included, whatever became of their parent)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

MARKER_VARIABLE = "MT_EVAL_TEST_MARKER"


def marked_environment() -> tuple[str, dict[str, str]]:
    """A fresh marker, and this process's environment with it: what a test passes to the command it starts."""
    marker = uuid.uuid4().hex
    return marker, {**os.environ, MARKER_VARIABLE: marker}


def processes_marked(marker: str) -> list[str]:
    """The ids of the live processes whose environment holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found
