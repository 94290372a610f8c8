"""A command run from a directory removed after the shell entered it (``rm -rf`` of a build directory, a branch
switched in another terminal) says so and how to fix it. Before: ``mt-eval new`` ended in a traceback from the
template's rendering, and ``mt-eval run`` evaluated the whole corpus, wrote its card, and then exited 1 with
"[Errno 2] No such file or directory" as it printed the summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAID = "the current directory no longer exists (it was removed after the shell entered it): cd to a directory"


def from_a_removed_directory(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    removed = tmp_path / "removed"
    removed.mkdir()
    program = ("import os, sys; removed = sys.argv.pop(1); os.chdir(removed); os.rmdir(removed); "
               "from mt_eval.cli import console_main; console_main()")
    return subprocess.run([sys.executable, "-c", program, str(removed), *argv], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("argv", [["new", "{out}", "--no-input"],
                                  ["run", "--demo", "--out", "{out}", "--latency-sample", "0",
                                   "--no-contamination-check"]])
def test_a_command_from_a_removed_directory_says_so_before_any_work(argv: list[str], tmp_path: Path):
    out = tmp_path / "made"
    done = from_a_removed_directory([word.format(out=out) for word in argv], tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith(f"mt-eval {argv[0]}: {SAID}"), done.stderr
    assert not out.exists()
