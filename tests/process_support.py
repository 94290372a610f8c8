"""Finding the processes a test started, by a marker in their environment (children and grandchildren
included, whatever became of their parent); interrupting one that waits for a run directory."""

from __future__ import annotations

import os
import signal
import subprocess
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


def interrupted_while_waiting(waiting: subprocess.Popen[str]) -> str:
    """Ctrl-C (SIGINT) to a command once it says it waits for a run directory another process holds (``--wait``);
    what it wrote to stderr. It must exit 130, as after any Ctrl-C."""
    assert waiting.stderr is not None
    line = ""
    while "waiting for it (--wait)" not in line:
        line = waiting.stderr.readline()
        assert line, "it ended without waiting"
    waiting.send_signal(signal.SIGINT)
    assert waiting.wait(30) == 130
    return line + waiting.stderr.read()
