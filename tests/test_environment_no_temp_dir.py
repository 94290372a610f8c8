"""A machine where no directory for temporary files can be written (TMPDIR missing, /tmp and /var/tmp read-only,
a read-only current directory): every command that needs one says so and how to fix it (TMPDIR), in one line.
Before: `gate`, `verify`, `validate` and `contamination` ended in a traceback (sacrebleu asks for one as it is
imported), `publish` called it each card's "fault of mt-eval", and `run` translated the whole corpus first, to
fail at scoring with a bare "[Errno 2] No usable temporary directory found"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
DEMO_CORPUS = REPO / "examples" / "data" / "eng-spa-demo.json"
FIX = "set TMPDIR to a directory you can write in"


def without_temporary_directory(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``mt-eval ARGV`` in a process where Python finds no directory for temporary files (as it does when TMPDIR,
    /tmp, /var/tmp, /usr/tmp and the current directory cannot be written: not to be had as root, so the list of
    places it tries is made one that does not exist)."""
    gone = cwd / "no-such-directory"
    program = ("import sys, tempfile; gone = sys.argv.pop(1); tempfile._candidate_tempdir_list = lambda: [gone]; "
               "from mt_eval.cli import console_main; console_main()")
    return subprocess.run([sys.executable, "-c", program, str(gone), *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def said_once(done: subprocess.CompletedProcess[str], command: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"mt-eval {command}: ")]
    assert len(lines) == 1 and "No usable temporary directory found" in lines[0] and FIX in lines[0], done.stderr


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run card of the demo, made where temporary files can be written."""
    out = tmp_path_factory.mktemp("demo") / "run"
    subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--demo", "--out", str(out), "--latency-sample", "0",
                    "--no-contamination-check", "--quiet"], check=True, capture_output=True, timeout=120)
    return out / "card.json"


def test_gate_and_verify_say_what_is_missing_and_the_fix(tmp_path: Path, card: Path):
    for command in ("gate", "verify"):
        said_once(without_temporary_directory([command, str(card)], tmp_path), command)


def test_run_says_so_before_the_method_translates_anything(tmp_path: Path):
    done = without_temporary_directory(["run", "--demo", "--out", str(tmp_path / "run"), "--latency-sample", "0"],
                                       tmp_path)
    said_once(done, "run")
    assert not (tmp_path / "run" / "run.json").exists(), "the run started: the method translated the corpus in vain"


def test_publish_says_so_once_and_reports_each_card_not_tried(tmp_path: Path, card: Path):
    done = without_temporary_directory(["publish", str(card), "--db", str(tmp_path / "board.db"), "--json",
                                        "--corpus", str(DEMO_CORPUS)], tmp_path)
    said_once(done, "publish")
    assert "fault of mt-eval" not in done.stderr
    [report] = json.loads(done.stdout)
    assert report["status"] == "not_tried" and "TMPDIR" in report["message"]
    assert not (tmp_path / "board.db").exists()
