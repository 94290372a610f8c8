"""``mt-eval decide run`` and ``mt-eval grade`` say a guest still starting at --start-timeout as ``mt-eval run`` says
it: the method cannot start, and the fix names --start-timeout (before: the bridge's words alone, which do not)."""

from __future__ import annotations

import sys
from pathlib import Path

from grading_support import grade
from mt_eval.cli import main

REPO = Path(__file__).parent.parent
SILENT = "silent cannot start: guest silent did not answer initialize within 0.5 s"
SLOW_START_FIX = "fix: if it loads a large model as it starts, give it longer with --start-timeout SECONDS"


def silent(make_plugin, questions: list[str]) -> Path:
    """A command guest that never answers initialize."""
    return make_plugin({"name": "Silent", "command": [sys.executable, "-c", "import time; time.sleep(600)"],
                        "implements": ["decide"], "decide": {"question_types": questions}, "dependency_class": "S",
                        "dependencies": []}, name="silent")


def test_decide_names_the_start_timeout_for_a_guest_still_starting(make_plugin, tmp_path: Path, capsys):
    method = silent(make_plugin, ["choice", "score", "noul"])
    assert main(["decide", "run", "--method", str(method), "--corpus",
                 str(REPO / "examples" / "data" / "adequacy-decisions.jsonl"), "--out", str(tmp_path / "run"),
                 "--quiet", "--start-timeout", "0.5"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mt-eval decide: {SILENT}"), err
    assert SLOW_START_FIX in err


def test_grade_names_the_start_timeout_for_a_grader_still_starting(demo_run: Path, make_plugin, tmp_path: Path,
                                                                   capsys):
    grader = silent(make_plugin, ["score"])
    assert grade(demo_run, "--grader", str(grader), "--out", str(tmp_path / "g"), "--start-timeout", "0.5") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mt-eval grade: {SILENT}"), err
    assert SLOW_START_FIX in err
