"""`mt-eval grade`: blind grading of a run card by a decision method (a grader never receives the identity of
the method it grades), the grading card, and a grader's quality against human labels (grading by people through
sheets: test_grading_sheets.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grading_support import REPO, RULES, grade, grading_card
from mt_eval.cli import main

LABELS = REPO / "examples" / "data" / "demo-adequacy-labels.jsonl"
RECORDER = '''
import json, os


class Recorder:
    """Grades every item 3 (or names a method when told to) and records all it is given."""

    def __init__(self, manifest, directory):
        self.seen = {"constructor": {"manifest": repr(manifest), "directory": str(directory)}}

    async def decide(self, rows, config):
        with open(os.environ["GRADER_RECORD"], "a") as f:
            f.write(json.dumps({"rows": rows, "config": repr(config), "env": sorted(os.environ),
                                **self.seen}) + "\\n")
        leak = os.environ.get("GRADER_LEAKS")
        out = []
        for row in rows:
            [(name, question)] = row["questions"].items()
            labels = [str(level["value"]) for level in question["levels"]]
            answer = {"probabilities": {l: (1.0 if l == "3" else 0.0) for l in labels}}
            result = {"id": row["id"], "answers": {name: answer}}
            if leak:
                result["metadata"] = {"guess": f"this looks like {leak}"}
            out.append(result)
        return out
'''


@pytest.fixture
def routed_card(demo_run, tmp_path) -> Path:
    """The demo card as if run through a champollion pair with a model: more that must never reach a grader."""
    card = json.loads(demo_run.read_text())
    card["covariates"]["model"] = "secret-model-xyz"
    card["method"]["champollion"] = {"pair": "en:es", "method_plugin": "my-private-plugin",
                                     "plugin_directory": "../plugins/lexicon-private",
                                     "method_fingerprint": "fp-123abc"}
    from mt_eval.harness.verify import canonical_sha256

    card["content_sha256"] = canonical_sha256(card)  # (resealed: grade takes only a card that verifies)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    return path


@pytest.fixture
def recorder(make_plugin, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GRADER_RECORD", str(tmp_path / "record.jsonl"))
    return make_plugin({"name": "Recorder", "entry_point": "pipeline:Recorder", "implements": ["decide"],
                        "decide": {"question_types": ["score"]}, "dependency_class": "S", "dependencies": []},
                       files={"pipeline.py": RECORDER}, name="recorder")


def test_a_grader_never_receives_the_identity_of_the_method_it_grades(routed_card, recorder, tmp_path):
    assert grade(routed_card, "--grader", str(recorder), "--out", str(tmp_path / "g"), "--seed", "1") == 0
    received = (tmp_path / "record.jsonl").read_text()
    card = json.loads(routed_card.read_text())
    secrets = [card["method"]["method_id"], card["method"]["name"], card["run_id"], card["method"]["code_sha256"],
               "secret-model-xyz", "my-private-plugin", "lexicon-private", "fp-123abc", "en:es", "demo-01",
               "lexicon"]
    for secret in secrets:
        assert secret.lower() not in received.lower(), f"the grader received {secret!r}"
    rows = [row for call in map(json.loads, received.splitlines()) for row in call["rows"]]
    assert len(rows) == 30
    assert all(set(row["state"]) == {"source", "candidate", "reference", "source_lang", "target_lang"}
               for row in rows)
    assert sorted(row["id"] for row in rows) == [f"item-{n:04d}" for n in range(1, 31)]
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30


def test_the_grader_is_not_given_the_shuffles_seed(demo_run, recorder, tmp_path):
    """With the shuffle's seed and the public corpus, a grader could rebuild which item is which entry."""
    assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / "g"), "--seed", "7") == 0
    assert grading_card(tmp_path / "g")["blinding"]["seed"] == 7
    [config] = {json.loads(line)["config"] for line in (tmp_path / "record.jsonl").read_text().splitlines()}
    assert "seed=7," not in config and "seed=" in config  # (a seed of its own, the same for the same --seed)


def test_items_are_shuffled_with_a_recorded_seed_and_the_same_seed_gives_the_same_order(demo_run, recorder, tmp_path):
    orders = []
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / name), "--seed", seed) == 0
        card = grading_card(tmp_path / name)
        assert card["blinding"]["seed"] == int(seed)
        orders.append([e["item"] for e in card["entries"]])
    assert orders[0] == orders[1] != orders[2]
    assert orders[0] != sorted(orders[0])  # shuffled, not in corpus order
    assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / "d")) == 0
    assert isinstance(grading_card(tmp_path / "d")["blinding"]["seed"], int)


def test_a_grader_that_returns_the_methods_name_is_refused_naming_row_and_question(demo_run, recorder, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setenv("GRADER_LEAKS", "lexicon-eng-spa")
    assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / "g"), "--seed", "2") == 4
    card = grading_card(tmp_path / "g")
    assert card["summary"]["graded"] == 0 and card["summary"]["failed"] == 30
    entry = card["entries"][0]
    assert entry["error"] == (f'the grader returned the graded method\'s identity ("lexicon-eng-spa") in row '
                              f'{entry["item"]}, question "adequacy": a grader must not know which method it grades, '
                              "so this answer is refused")


def test_the_grading_card(demo_run, tmp_path):
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "g"), "--seed", "3") == 0
    card = grading_card(tmp_path / "g")
    run = json.loads(demo_run.read_text())
    assert card["card_version"] == "grading-card/1" and card["content_sha256"]
    assert card["run"]["run_id"] == run["run_id"] and card["run"]["card_content_sha256"] == run["content_sha256"]
    assert card["grader"]["method_id"] == "rules-grader" and card["human_graders"] is None
    assert card["rubric"]["name"] == card["question"] == "adequacy" and len(card["rubric"]["levels"]) == 5
    assert "method.method_id" in card["blinding"]["withheld"] and card["blinding"]["with_reference"] is True
    scored = [r["id"] for r in run["results"] if not r["id"].startswith(("canary-", "negative-"))]
    assert [e["entry_id"] for e in card["entries"]] == scored  # only the scored entries are graded
    for entry in card["entries"]:
        assert abs(sum(entry["distribution"].values()) - 1) < 1e-9
        assert entry["expected"] == pytest.approx(sum(int(k) * p for k, p in entry["distribution"].items()))
        assert entry["level"] == max(entry["distribution"], key=entry["distribution"].get)
    mean = card["summary"]["mean_expected"]
    assert mean["value"] == pytest.approx(sum(e["expected"] for e in card["entries"]) / 30, abs=1e-6)
    assert mean["ci_low"] < mean["value"] < mean["ci_high"]
    assert sum(card["summary"]["levels"].values()) == 30 and card["quality"] is None


def test_without_the_reference_the_grader_sees_source_and_candidate_only(demo_run, recorder, tmp_path):
    assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / "g"), "--no-reference") == 0
    rows = json.loads((tmp_path / "record.jsonl").read_text().splitlines()[0])["rows"]
    assert all("reference" not in row["state"] for row in rows)
    assert grading_card(tmp_path / "g")["blinding"]["with_reference"] is False


def test_failed_translations_are_recorded_and_not_graded(demo_run, recorder, tmp_path):
    card = json.loads(demo_run.read_text())
    card["results"][4] = {**card["results"][4], "predicted": None, "error": "timed out after 120 s"}
    from mt_eval.harness.verify import canonical_sha256

    card["content_sha256"] = canonical_sha256(card)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    assert grade(path, "--grader", str(recorder), "--out", str(tmp_path / "g")) == 0
    graded = grading_card(tmp_path / "g")
    assert graded["summary"]["not_graded"] == 1 and graded["summary"]["graded"] == 29
    assert graded["entries"][4] == {"entry_id": "demo-05", "item": None, "expected": None, "distribution": None,
                                    "level": None, "error": "the translation failed: timed out after 120 s"}


def test_grading_needs_the_runs_own_corpus_and_a_grader_that_answers_score_questions(demo_run, make_plugin, tmp_path,
                                                                                       capsys):
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "demo-01", "source": "x", "reference": "y"}\n')
    assert main(["grade", str(demo_run), "--grader", str(RULES), "--corpus", str(other), "--quiet"]) == 1
    assert "is not the corpus the run used" in capsys.readouterr().err
    assert grade(demo_run, "--grader", str(REPO / "examples" / "lexicon-eng-spa")) == 1
    assert "this needs a method that implements decide" in capsys.readouterr().err
    noul_only = make_plugin({"name": "N", "entry_point": "pipeline:Recorder", "implements": ["decide"],
                             "decide": {"question_types": ["noul"]}, "dependency_class": "S", "dependencies": []},
                            files={"pipeline.py": RECORDER})
    assert grade(demo_run, "--grader", str(noul_only)) == 1
    assert "does not answer score questions" in capsys.readouterr().err
    assert main(["grade", str(demo_run)]) == 2
    assert "grade needs --grader DIR" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "missing.json"), "--grader", str(RULES)]) == 1
    assert "cannot read the run card" in capsys.readouterr().err


def test_a_rubric_without_order_is_refused(demo_run, tmp_path, capsys):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"name": "fluency", "instructions": "?", "levels": [{"value": 2}, {"value": 1}]}))
    assert grade(demo_run, "--grader", str(RULES), "--rubric", str(rubric)) == 1
    assert "$.levels[1].value: the rubric is not in order" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["source", "comment", "item", "reference"])
def test_a_rubric_named_like_a_sheet_column_is_refused(demo_run, tmp_path, capsys, name: str):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"name": name, "instructions": "?", "levels": [{"value": 1}, {"value": 2}]}))
    assert main(["grade", "export", str(demo_run), "--out", str(tmp_path / "sheets"), "--rubric", str(rubric)]) == 1
    assert f'$.name: "{name}" is a column every grading sheet has already' in capsys.readouterr().err
    assert not (tmp_path / "sheets").exists()


def test_a_custom_rubric_names_the_question(demo_run, recorder, tmp_path):
    rubric = tmp_path / "fluency.json"
    rubric.write_text(json.dumps({"name": "fluency", "instructions": "Is it fluent?", "levels": [
        {"value": 1, "label": "poor"}, {"value": 2, "label": "ok"}, {"value": 3, "label": "good"}]}))
    assert grade(demo_run, "--grader", str(RULES), "--rubric", str(rubric), "--out", str(tmp_path / "g")) == 0
    card = grading_card(tmp_path / "g")
    assert card["question"] == "fluency" and set(card["entries"][0]["distribution"]) == {"poor", "ok", "good"}
    assert 1 <= card["summary"]["mean_expected"]["value"] <= 3


def test_grader_quality_against_human_labels(demo_run, tmp_path):
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "g"), "--labels", str(LABELS)) == 0
    quality = grading_card(tmp_path / "g")["quality"]
    assert quality["entries"] == 30 and quality["labels"]["kind"] == "labels"
    for metric in ("accuracy", "kl", "brier", "ece", "ev_mae"):
        value = quality["metrics"][metric]
        assert value["ci_low"] <= value["value"] <= value["ci_high"], metric


def test_bad_labels_are_named_by_line_entry_and_question(demo_run, tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "demo-01", "label": "9"}\n{"id": "demo-02", "distribution": {"3": 0.5, "4": 0.4}}\n')
    assert grade(demo_run, "--grader", str(RULES), "--labels", str(labels)) == 1
    err = capsys.readouterr().err
    assert f'{labels}:1 (entry "demo-01", question "adequacy"): gold "9" is not an option' in err
    assert f'{labels}:2 (entry "demo-02", question "adequacy"): gold distribution: missing options' in err
    labels.write_text('{"id": "demo-01", "label": 4}\n')  # (a level's name as a number: said so, not only refused)
    assert grade(demo_run, "--grader", str(RULES), "--labels", str(labels)) == 1
    assert 'gold 4 is a number: an option\'s name is a string; write "4"' in capsys.readouterr().err
    labels.write_text('{"id": "demo-01", "label": "4", "n": 1' + "0" * 5000 + "}\n")  # (JSON, beyond int())
    assert grade(demo_run, "--grader", str(RULES), "--labels", str(labels)) == 1
    err = capsys.readouterr().err
    assert (f"{labels}:1: holds an integer of 5,001 digits, more than can be read (4,300 at most): write it as a "
            "string, in double quotes, or remove it") in err
    assert "not JSON" not in err and "set_int_max_str_digits" not in err


def test_labels_nested_too_deep_or_not_utf8_are_named_by_line(demo_run, tmp_path, capsys):
    """Before, a line nested 10,000 deep stopped grade with a RecursionError traceback, and a byte that is not
    UTF-8 was read as U+FFFD: its entry's label was lost as "no entry to grade has a label"."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "demo-02", "label": "3"}\n{"id": "demo-01", "label": ' + "[" * 10_000 + "]" * 10_000
                      + "}\n")
    assert grade(demo_run, "--grader", str(RULES), "--labels", str(labels)) == 1
    err = capsys.readouterr().err
    assert f"{labels}:2: arrays and objects nested too deep to read: write each label as " in err
    assert "Traceback" not in err and f"{labels}:1" not in err
    labels.write_bytes(b'{"id": "demo-02", "label": "3"}\n{"id": "demo-01\xe9", "label": "4"}\n')
    assert grade(demo_run, "--grader", str(RULES), "--labels", str(labels)) == 1
    assert (f"{labels}: not valid UTF-8: byte 0xe9 at line 2 (offset 47): save the file as UTF-8"
            in capsys.readouterr().err)


def test_labels_of_no_entry_to_grade_are_refused_before_any_grading_and_others_are_named(demo_run, recorder,
                                                                                       tmp_path, capsys):
    """Before, such labels were refused only after the grader had graded every entry: all of it lost."""
    none = tmp_path / "none.jsonl"
    none.write_text('{"id": "other-1", "label": "3"}\n')
    assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / "g"), "--labels", str(none)) == 1
    assert f"no entry to grade has a label in {none} (1 labels, 30 entries to grade)" in capsys.readouterr().err
    assert not (tmp_path / "record.jsonl").exists() and not (tmp_path / "g").exists()
    some = tmp_path / "some.jsonl"
    some.write_text('{"id": "demo-01", "label": "3"}\n{"id": "nope-1", "label": "4"}\n')
    assert grade(demo_run, "--grader", str(recorder), "--out", str(tmp_path / "g"), "--labels", str(some)) == 0
    assert (f'mt-eval grade: warning: 1 of the 2 labels in {some} are of entries this grading does not grade (e.g. '
            '"nope-1"): they are left out') in capsys.readouterr().err
    assert grading_card(tmp_path / "g")["quality"]["entries"] == 1


def test_the_summary_goes_to_standard_output_before_the_cards_path_and_failed_items_to_standard_error(
        demo_run, make_plugin, tmp_path, capsys):
    """As `mt-eval run` prints its result and says its failures, so `grade ... > result.txt` keeps the summary.
    Before: the summary, its failed items among it, on standard error, with only the card's path on standard
    output."""
    flaky = make_plugin({"name": "Flaky", "entry_point": "pipeline:Flaky", "implements": ["decide"],
                         "decide": {"question_types": ["score"]}, "dependency_class": "S", "dependencies": []},
                        files={"pipeline.py": FLAKY}, name="flaky")
    args = ["grade", str(demo_run), "--corpus", str(REPO / "examples" / "data" / "eng-spa-demo.json"), "--grader",
            str(flaky), "--resamples", "50", "--seed", "4"]
    assert main([*args, "--out", str(tmp_path / "g")]) == 0
    shown = capsys.readouterr()
    assert "29 graded, 1 failed, 0 not graded (not translated)" in shown.out and "mean expected adequacy" in shown.out
    assert shown.out.splitlines()[-1] == f"grading card: {tmp_path / 'g' / 'grading-card.json'}"
    assert "graded, 1 failed" not in shown.err
    assert ("grading failed on 1 of 30 items (1 distinct error):\n  1 × the engine dropped item-0001  (e.g. "
            "item-0001)\n") in shown.err
    assert "item-0001" not in shown.out
    assert main([*args, "--out", str(tmp_path / "q"), "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.out == f"grading card: {tmp_path / 'q' / 'grading-card.json'}\n"  # (the path alone)
    assert "grading failed on 1 of 30 items (1 distinct error):" in quiet.err  # (as run says them under --quiet)


FLAKY = """
class Flaky:
    async def decide(self, rows, config):
        return [{"id": row["id"], "error": "the engine dropped " + row["id"]} if row["id"] == "item-0001" else
                {"id": row["id"], "answers": {name: {"probabilities": {str(level["value"]): 1.0 if level["value"] == 3
                                                                       else 0.0 for level in question["levels"]}}
                                              for name, question in row["questions"].items()}}
                for row in rows]
"""


def test_a_grader_that_fails_every_entry_writes_its_card_says_each_failure_once_and_exits_4(demo_run, make_plugin,
                                                                                           tmp_path, capsys):
    """Before, the first failure was said twice (among the failed items, then after "no entry was graded"), and the
    summary gave a mean of "-" and every level ×0 rather than saying that nothing was graded."""
    failing = make_plugin({"name": "Down", "entry_point": "pipeline:Down", "implements": ["decide"],
                           "decide": {"question_types": ["score"]}, "dependency_class": "S", "dependencies": []},
                          files={"pipeline.py": "class Down:\n    async def decide(self, rows, config):\n"
                                                "        raise RuntimeError('engine down')\n"}, name="down")
    assert grade(demo_run, "--grader", str(failing), "--out", str(tmp_path / "g"), "--labels", str(LABELS)) == 4
    err = capsys.readouterr().err
    assert "no labelled entry was graded, so the grader is not measured against" in err
    failed = "the method failed: RuntimeError: engine down"
    assert re.search(f"grading failed on 30 of 30 items \\(1 distinct error\\):\n  30 × {re.escape(failed)}  "
                     r"\(e\.g\. item-\d{4}\)\nmt-eval grade: no entry was graded \(30 failed\)\n\Z", err)
    assert grading_card(tmp_path / "g")["quality"] is None
    assert main(["grade", str(demo_run), "--corpus", str(REPO / "examples" / "data" / "eng-spa-demo.json"),
                 "--grader", str(failing), "--out", str(tmp_path / "shown"), "--resamples", "50"]) == 4
    out = capsys.readouterr().out
    assert ("  0 graded, 30 failed, 0 not graded (not translated)\n  nothing was graded: no mean expected adequacy, "
            "no most probable level\ngrading card: ") in out and failed not in out


def test_a_run_whose_every_translation_failed_grades_nothing_and_exits_4(demo_run, recorder, tmp_path, capsys):
    card = json.loads(demo_run.read_text())
    card["results"] = [{**r, "predicted": None, "error": "engine down"} for r in card["results"]]
    from mt_eval.harness.verify import canonical_sha256

    card["content_sha256"] = canonical_sha256(card)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    assert grade(path, "--grader", str(recorder), "--out", str(tmp_path / "g")) == 4
    assert "no entry was graded (30 not graded: not translated): the translation failed: engine down" in \
        capsys.readouterr().err


def test_an_entry_the_method_abstained_on_is_not_graded_as_abstained_not_failed(demo_run, recorder, tmp_path):
    card = json.loads(demo_run.read_text())
    abstained = next(r for r in card["results"] if r.get("predicted") and r["id"].startswith("demo-"))
    abstained.update(predicted=None, abstained=True, abstain_reason="no glossary for this domain")
    from mt_eval.harness.verify import canonical_sha256

    card["content_sha256"] = canonical_sha256(card)
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    assert grade(path, "--grader", str(recorder), "--out", str(tmp_path / "g")) == 0
    entries = {e["entry_id"]: e for e in grading_card(tmp_path / "g")["entries"]}
    assert entries[abstained["id"]]["error"] == "the method abstained: no glossary for this domain"


def test_a_card_changed_after_the_run_sealed_it_is_not_graded(demo_run, recorder, tmp_path, capsys):
    """Its hash is what the grading card would certify (and what --labels matches people's grades by): an edited
    card is refused, as publish, compare and verify refuse it."""
    card = json.loads(demo_run.read_text())
    card["results"][0]["predicted"] = "tampered"
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    assert grade(path, "--grader", str(recorder), "--out", str(tmp_path / "g")) == 1
    err = capsys.readouterr().err
    assert f"{path} does not verify: it says its content hashes to {card['content_sha256'][:16]}…" in err
    assert "it was changed after the run sealed it; grade the card the run wrote" in err
    assert not (tmp_path / "g").exists() and not (tmp_path / "record.jsonl").exists()


def test_a_rubric_label_with_spaces_at_its_ends_is_refused(tmp_path, capsys):
    """Before, it was accepted and exported, and then no filled sheet could be imported: its cells are read
    stripped, and " 0" is no option."""
    rubric = json.loads((REPO / "sdk" / "mt_eval" / "decisions" / "rubrics" / "adequacy-0-4.json").read_text())
    rubric["levels"][0]["label"] = " none"
    path = tmp_path / "rubric.json"
    path.write_text(json.dumps(rubric), encoding="utf-8")
    from mt_eval.decisions.rubric import read_rubric
    from mt_eval.problems import ProblemsError

    with pytest.raises(ProblemsError, match=r'\$\.levels\[0\]\.label: the label " none" has spaces at its ends'):
        read_rubric(path)


def test_two_gradings_of_one_card_that_end_at_once_both_write_it_whole(demo_run, tmp_path, monkeypatch):
    """Before: the one to end second failed with a FileNotFoundError traceback (both wrote grading-card.json.tmp,
    and the first renamed the other's temporary file with its own)."""
    import subprocess
    import sys

    out = tmp_path / "g"
    rename = Path.replace
    other: list[subprocess.CompletedProcess[str]] = []

    def replace(self: Path, target: Path) -> Path:
        if Path(target) == out / "grading-card.json" and not other:  # the other grading ends just now
            other.append(subprocess.run([sys.executable, "-m", "mt_eval.cli", "grade", str(demo_run), "--corpus",
                                         str(REPO / "examples" / "data" / "eng-spa-demo.json"), "--grader",
                                         str(RULES), "--out", str(out), "--resamples", "200", "--quiet"],
                                        capture_output=True, text=True, timeout=120))
        return rename(self, target)

    monkeypatch.setattr(Path, "replace", replace)
    assert grade(demo_run, "--grader", str(RULES), "--out", str(out)) == 0
    assert other and other[0].returncode == 0, other[0].stderr
    assert grading_card(out)["grader"]["method_id"] == "rules-grader"
    assert [path.name for path in out.iterdir()] == ["grading-card.json"]  # no temporary file left
