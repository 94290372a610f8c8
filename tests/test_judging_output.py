"""What ``mt-eval grade`` and ``mt-eval decide run`` say as they go and when they end: grading shows its progress on
standard error, as ``decide run`` does (a grader that takes hours — a model behind an endpoint, 120 s an item — is
not silent until it ends), the grader's agreement with labels says which labelled entries it was not measured on,
and neither command speaks of 95% intervals that ``--resamples 0`` did not compute."""

from __future__ import annotations

from grading_support import REPO, RULES, grading_card
from mt_eval.cli import main

CORPUS = REPO / "examples" / "data" / "eng-spa-demo.json"
ADEQUACY = REPO / "examples" / "data" / "adequacy-decisions.jsonl"
LABELS = REPO / "examples" / "data" / "demo-adequacy-labels.jsonl"
HALF_FAILING = """
class HalfFailing:
    async def decide(self, rows, config):
        return [{"id": row["id"], "error": "the engine dropped it"} if int(row["id"][-4:]) % 2 else
                {"id": row["id"], "answers": {name: {"probabilities": {str(level["value"]): 1.0 if level["value"] == 3
                                                                       else 0.0 for level in question["levels"]}}
                                              for name, question in row["questions"].items()}}
                for row in rows]
"""


def test_grading_says_its_progress_and_its_errors_on_standard_error_not_with_quiet(demo_run, tmp_path, capsys):
    """Before: nothing at all on standard error while the grader graded, however long it took."""
    args = ["grade", str(demo_run), "--corpus", str(CORPUS), "--grader", str(RULES), "--resamples", "20",
            "--seed", "4"]
    assert main([*args, "--out", str(tmp_path / "g")]) == 0
    shown = capsys.readouterr()
    assert "rules-grader grading: 30/30 in " in shown.err and ", 0 errors\n" in shown.err, shown.err
    assert "grading: " not in shown.out  # (the result alone on standard output)
    assert main([*args, "--out", str(tmp_path / "q"), "--quiet"]) == 0
    assert "grading: " not in capsys.readouterr().err


def half_failing(make_plugin):
    return make_plugin({"name": "Half failing", "entry_point": "pipeline:HalfFailing", "implements": ["decide"],
                         "decide": {"question_types": ["score"]}, "dependency_class": "S", "dependencies": []},
                       files={"pipeline.py": HALF_FAILING}, name="half-failing")


def test_grading_progress_counts_the_items_the_grader_failed(demo_run, make_plugin, tmp_path, capsys):
    assert main(["grade", str(demo_run), "--corpus", str(CORPUS), "--grader", str(half_failing(make_plugin)),
                 "--resamples", "20",
                 "--out", str(tmp_path / "g")]) == 0
    err = capsys.readouterr().err
    assert "half-failing grading: 30/30 in " in err and ", 15 errors\n" in err, err


def test_without_resamples_no_interval_is_announced(demo_run, tmp_path, capsys):
    """Before: "2.000 (95% interval, 0 resamples of entries)" and "95% intervals: 0 case-level bootstrap resamples",
    beside figures that had none."""
    assert main(["grade", str(demo_run), "--corpus", str(CORPUS), "--grader", str(RULES), "--resamples", "0",
                 "--out", str(tmp_path / "g")]) == 0
    out = capsys.readouterr().out
    assert "95%" not in out and "0 resamples" not in out, out
    assert "  mean expected adequacy: 3.0" in out and " (no interval: --resamples 0)\n" in out, out
    assert main(["decide", "run", "--method", str(RULES), "--corpus", str(ADEQUACY), "--out", str(tmp_path / "d"),
                 "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert "95%" not in out and "0 case-level" not in out, out
    assert "\n  no intervals (--resamples 0); ECE over 10 bins; every number from run " in out, out
    assert main(["decide", "run", "--method", str(RULES), "--corpus", str(ADEQUACY), "--out", str(tmp_path / "d"),
                 "--resamples", "10", "--force"]) == 0
    assert "\n  95% intervals: 10 case-level bootstrap resamples (seed 12345); ECE" in capsys.readouterr().out


def test_agreement_with_labels_says_the_labelled_entries_the_grader_failed_on(demo_run, make_plugin, tmp_path,
                                                                              capsys):
    """Before: "against 15 human labels", and nothing in the card, when 30 labelled entries were sent and the grader
    failed on 15 of them: its agreement looked measured on every label it was given."""
    args = ["grade", str(demo_run), "--corpus", str(CORPUS), "--resamples", "20", "--labels", str(LABELS)]
    assert main([*args, "--grader", str(half_failing(make_plugin)), "--out", str(tmp_path / "g")]) == 0
    out = capsys.readouterr().out
    assert (f"  against 15 of 30 human labels ({LABELS}; 15 labelled entries the grader failed on left out): "
            "accuracy ") in out, out
    quality = grading_card(tmp_path / "g")["quality"]
    assert (quality["entries"], quality["labelled"]) == (15, 30)
    some = tmp_path / "some.jsonl"  # (labels of 20 entries, every one graded: nothing left out to say)
    some.write_text("".join(line + "\n" for line in LABELS.read_text(encoding="utf-8").splitlines()[:20]),
                    encoding="utf-8")
    assert main([*args[:-1], str(some), "--grader", str(RULES), "--out", str(tmp_path / "r")]) == 0
    assert f"  against 20 human labels ({some}): accuracy " in capsys.readouterr().out
    quality = grading_card(tmp_path / "r")["quality"]
    assert (quality["entries"], quality["labelled"]) == (20, 20)
