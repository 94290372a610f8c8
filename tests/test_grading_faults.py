"""``mt-eval grade`` and ``grade export`` where the grading card or the sheets cannot be written: said before the
grader is asked when it can be, said plainly when the disk fills, and no export left in part."""

from __future__ import annotations

from grading_support import REPO, RULES, grade
from test_decide_faults import cli

CORPUS = REPO / "examples" / "data" / "eng-spa-demo.json"


def test_a_full_disk_at_export_keeps_no_part_of_it_and_a_new_export_is_not_refused(demo_run, tmp_path):
    """Before: a traceback, and sheet.csv left behind without its key, which the next export (without --force)
    then called "an earlier export" that graders may be filling in."""
    out = tmp_path / "sheets"
    args = ("grade", "export", str(demo_run), "--corpus", str(CORPUS), "--out", str(out), "--seed", "3")
    full = cli(*args, limit=10_000)  # (sheet.csv, about 3 kB, fits; sheet.jsonl, about 27 kB, does not)
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    assert full.stderr.strip() == (f"mt-eval grade: cannot write the sheets in {out}: File too large; nothing of "
                                   "this export was kept. Free space, or make the directory writable, and export "
                                   "again")
    assert not out.exists()  # (made for the export, and nothing of it kept: not left behind empty)
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in out.iterdir()) == ["key.json", "rubric.md", "sheet.csv", "sheet.jsonl"]


def test_a_full_disk_at_the_grading_card_is_said_not_a_traceback(demo_run, tmp_path):
    """Before: "OSError: [Errno 28] No space left on device" in a traceback."""
    out = tmp_path / "g"
    full = cli("grade", str(demo_run), "--corpus", str(CORPUS), "--grader", str(RULES), "--out", str(out), "--quiet",
               "--resamples", "50", limit=4_000)  # (the card is about 14 kB)
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    assert full.stderr.strip() == (f"mt-eval grade: cannot write {out / 'grading-card.json'}: File too large; no "
                                   "grading card was written. Free space, or make the directory writable (or give "
                                   "another --out), and grade again")
    assert not out.exists()  # (made for the card: no temporary file, and not left behind empty)


def test_a_full_disk_removes_the_directories_grade_made_for_the_card_and_keeps_one_that_was_there(demo_run, tmp_path):
    """Before: the empty grading/rules-grader directory (or --out) was left behind beside the run."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(demo_run.parent, run)
    args = ("grade", str(run / "card.json"), "--corpus", str(CORPUS), "--grader", str(RULES), "--quiet",
            "--resamples", "50")
    full = cli(*args, limit=4_000)  # (the card is about 14 kB)
    assert full.returncode == 1, full.stderr
    assert f"cannot write {run / 'grading' / 'rules-grader' / 'grading-card.json'}: File too large" in full.stderr
    assert not (run / "grading").exists()  # (both made for the card)
    there = tmp_path / "there"
    there.mkdir()
    assert cli(*args, "--out", str(there), limit=4_000).returncode == 1
    assert there.is_dir() and list(there.iterdir()) == []


ASKED = """
from pathlib import Path


class Marked:
    async def decide(self, rows, config):
        Path(__file__).with_name("asked").write_text("yes")
        return []
"""


def test_an_out_the_card_cannot_be_written_in_is_refused_before_the_grader_is_asked(demo_run, tmp_path, make_plugin,
                                                                                    capsys):
    """Before: every item was graded (a paid grader paid), then a NotADirectoryError traceback lost the grading."""
    grader = make_plugin({"name": "Marked", "entry_point": "pipeline:Marked", "implements": ["decide"],
                          "dependency_class": "S", "dependencies": []}, files={"pipeline.py": ASKED})
    (tmp_path / "file").write_text("not a directory", encoding="utf-8")
    out = tmp_path / "file" / "g"
    assert grade(demo_run, "--grader", str(grader), "--out", str(out)) == 1
    said = capsys.readouterr().err
    assert said.strip() == (f"mt-eval grade: cannot create --out {out}: {tmp_path / 'file'} is a file, not a "
                            "directory"), said
    assert not (grader / "asked").exists()


def test_the_default_place_is_named_as_such_when_it_cannot_be_written(demo_run, tmp_path, capsys):
    """The grading directory beside the run card, not an --out that was never given."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(demo_run.parent, run)
    (run / "grading").write_text("a file where the gradings go", encoding="utf-8")
    assert grade(run / "card.json", "--grader", str(RULES)) == 1
    said = capsys.readouterr().err
    assert said.strip() == (f"mt-eval grade: cannot create the grading directory {run / 'grading' / 'rules-grader'}"
                            f": {run / 'grading'} is a file, not a directory"), said
