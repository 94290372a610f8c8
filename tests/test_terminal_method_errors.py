"""A method's own error messages, as the run, decide and grade commands list what failed: their control and
invisible characters are shown escaped, its line breaks too (a method is code from elsewhere: what it raises must not
act on the terminal, nor put a line of its own among the command's), and the run card keeps each message as it was
raised."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parent.parent
DEMO = str(REPO / "examples" / "data" / "eng-spa-demo.json")
DECISIONS = str(REPO / "examples" / "data" / "adequacy-decisions.jsonl")
ODD = "\x1b[2J\u202egone\nstatus: complete"  # clears the screen, reads right to left, then says a line of its own
SHOWN = "\\x1b[2J\\u202egone\\nstatus: complete"


def mt_eval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True, timeout=300)


def plugin(directory: Path, manifest: dict[str, object], code: str) -> Path:
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({"entry_point": "pipeline:Odd", "dependencies": [], **manifest}))
    (directory / "pipeline.py").write_text(f"ODD = {ODD!r}\n{code}")
    return directory


def translator(tmp_path: Path) -> Path:
    return plugin(tmp_path / "odd", {"name": "Odd"}, "class Odd:\n    async def translate(self, entries, config):\n"
                  "        if entries[0]['id'] == 'demo-02':\n            raise RuntimeError(ODD)\n"
                  "        return [{'id': e['id'], 'predicted': e['source']} for e in entries]\n")


def decider(tmp_path: Path) -> Path:
    return plugin(tmp_path / "odd-grader", {"name": "Odd grader", "implements": ["decide"],
                                            "decide": {"question_types": ["score"]}, "dependency_class": "S"},
                  "class Odd:\n    async def decide(self, rows, config):\n        raise RuntimeError(ODD)\n")


def assert_escaped(text: str) -> None:
    assert SHOWN in text and "\x1b" not in text and "\u202e" not in text
    assert not any(line.startswith("status: complete") for line in text.splitlines())


def test_runs_failures_show_a_methods_error_escaped_and_the_card_keeps_it(tmp_path):
    done = mt_eval("run", "--method", str(translator(tmp_path)), "--corpus", DEMO, "--out", str(tmp_path / "run"),
                   "--batch-size", "1", "--max-errors", "1")
    assert "1 of 33 entries failed" in done.stderr, done.stderr
    assert_escaped(done.stderr + done.stdout)
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert [f["message"] for f in card["failures"]] == [f"the method failed: RuntimeError: {ODD}"]


def test_decide_runs_failures_show_a_methods_error_escaped(tmp_path):
    done = mt_eval("decide", "run", "--method", str(decider(tmp_path)), "--corpus", DECISIONS, "--out",
                   str(tmp_path / "decided"))
    assert done.returncode != 0 and "failed" in done.stderr, done.stderr
    assert_escaped(done.stderr + done.stdout)


def test_grades_failures_show_a_graders_error_escaped(tmp_path):
    assert mt_eval("run", "--demo", "--out", str(tmp_path / "demo"), "--quiet").returncode == 0
    done = mt_eval("grade", str(tmp_path / "demo" / "card.json"), "--grader", str(decider(tmp_path)), "--out",
                   str(tmp_path / "graded"))
    assert done.returncode == 4 and "grading failed on 30 of 30 items (1 distinct error):" in done.stderr, done.stderr
    assert_escaped(done.stderr + done.stdout)
