"""`mt-eval grade`: blind grading of a run card by a decision method (a grader never receives the identity of
the method it grades), the grading card, grading by people through sheets, and a grader's quality against
human labels."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
LABELS = REPO / "examples" / "data" / "demo-adequacy-labels.jsonl"
RULES = REPO / "examples" / "rules-grader"
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


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    assert main(["run", "--demo", "--out", str(out), "--quiet", "--resamples", "50"]) == 0
    return out / "card.json"


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


def grade(card: Path, *args: str) -> int:
    return main(["grade", str(card), "--corpus", str(REPO / "examples" / "data" / "eng-spa-demo.json"),
                 "--resamples", "200", "--quiet", *args])


def grading_card(out: Path) -> dict[str, Any]:
    return json.loads((out / "grading-card.json").read_text(encoding="utf-8"))


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


def fill_csv(sheet: Path, answers: dict[int, str]) -> Path:
    with sheet.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        row["adequacy"] = answers.get(i, "")
    out = sheet.with_name(f"filled-{len(answers)}.csv")
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out


def test_sheets_for_people_map_back_to_the_entries(demo_run, tmp_path, capsys):
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    assert {p.name for p in sheets.iterdir()} == {"sheet.csv", "sheet.jsonl", "rubric.md", "key.json"}
    exported = (sheets / "sheet.csv").read_text() + (sheets / "sheet.jsonl").read_text()
    assert "lexicon" not in exported.lower() and "demo-0" not in exported
    assert "**4**: All:" in (sheets / "rubric.md").read_text()
    key = json.loads((sheets / "key.json").read_text())
    first = json.loads((sheets / "sheet.jsonl").read_text().splitlines()[0])
    entry = key["items"][first["item"]]
    ana = fill_csv(sheets / "sheet.csv", {0: "4", 1: "2"})
    ben = sheets / "ben.jsonl"
    lines = [json.loads(line) for line in (sheets / "sheet.jsonl").read_text().splitlines()]
    lines[0]["answer"] = {"0": 0, "1": 0, "2": 0.5, "3": 0.5, "4": 0}
    ben.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(ana),
                 "--sheet", str(ben), "--out", str(tmp_path / "human"), "--quiet"]) == 0
    card = grading_card(tmp_path / "human")
    assert card["grader"] is None and [s["answered"] for s in card["human_graders"]["sheets"]] == [2, 1]
    graded = {e["entry_id"]: e for e in card["entries"]}
    assert graded[entry]["distribution"] == {"0": 0.0, "1": 0.0, "2": 0.25, "3": 0.25, "4": 0.5}
    assert graded[entry]["expected"] == pytest.approx(3.25)
    assert card["summary"]["graded"] == 2 and card["summary"]["unanswered"] == 28 and card["summary"]["failed"] == 0
    assert graded[entry]["error"] is None and {e["error"] for e in card["entries"] if e["entry_id"] not in (
        entry,) and e["distribution"] is None} == {"no grader answered it"}
    # the people's grading card is a set of human labels for judging a grader
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "g"),
                 "--labels", str(tmp_path / "human" / "grading-card.json")) == 0
    assert grading_card(tmp_path / "g")["quality"]["entries"] == 2


def test_labels_must_be_peoples_grades_of_the_run_graded(demo_run, tmp_path, capsys):
    """A grader's own card, or people's grades of another run (same entry ids, other translations), are no labels
    for this run."""
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "machine"), "--seed", "3") == 0
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "g"),
                 "--labels", str(tmp_path / "machine" / "grading-card.json")) == 1
    assert "holds the grades of the grader method rules-grader, not people's" in capsys.readouterr().err
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    filled = fill_csv(sheets / "sheet.csv", {0: "4", 1: "2"})
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--out", str(tmp_path / "human"), "--quiet"]) == 0
    other = tmp_path / "other" / "card.json"
    assert main(["run", "--demo", "--out", str(other.parent), "--quiet", "--resamples", "50", "--seed", "5"]) == 0
    assert grade(other, "--grader", str(RULES), "--out", str(tmp_path / "g2"),
                 "--labels", str(tmp_path / "human" / "grading-card.json")) == 1
    err = capsys.readouterr().err
    assert "grades run " in err and "not the run graded here" in err


def test_a_blank_sheet_imports_with_nothing_failed(demo_run, tmp_path, capsys):
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet",
                 str(sheets / "sheet.csv"), "--out", str(tmp_path / "human")]) == 0
    summary = grading_card(tmp_path / "human")["summary"]
    assert (summary["graded"], summary["failed"], summary["unanswered"]) == (0, 0, 30)
    assert "0 graded, 0 failed, 0 not graded (their translation failed), 30 not answered on any sheet" in \
        capsys.readouterr().err


def test_bad_sheets_are_refused_naming_line_row_and_question(demo_run, tmp_path, capsys):
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--format", "csv", "--seed", "8"]) == 0
    assert not (sheets / "sheet.jsonl").exists()
    filled = fill_csv(sheets / "sheet.csv", {0: "five", 2: "3"})
    rows = filled.read_text().splitlines()
    filled.write_text("\n".join([*rows, "item-9999,eng,spa,x,y,z,2,"]) + "\n")
    first_item = rows[1].split(",")[0]
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f'{filled}:2: row {first_item}, question "adequacy": gold "five" is not an option' in err
    assert f'{filled}:32: item "item-9999" is not in the key' in err
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json")]) == 2
    assert "import needs --sheet FILE" in capsys.readouterr().err


def test_a_sheet_is_imported_only_with_the_key_of_its_own_export(demo_run, tmp_path, capsys):
    """Every export numbers its items item-0001…; a sheet filled from another export would grade other entries."""
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["grade", "export", str(demo_run), "--out", str(first), "--seed", "8"]) == 0
    assert main(["grade", "export", str(demo_run), "--out", str(second), "--seed", "9"]) == 0
    csv_sheet = fill_csv(first / "sheet.csv", {0: "4", 1: "2"})
    lines = [json.loads(line) for line in (first / "sheet.jsonl").read_text().splitlines()]
    lines[0]["answer"] = "3"
    jsonl_sheet = tmp_path / "first.jsonl"
    jsonl_sheet.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    for sheet in (csv_sheet, jsonl_sheet):
        assert main(["grade", "import", str(demo_run), "--key", str(second / "key.json"), "--sheet", str(sheet),
                     "--out", str(tmp_path / "wrong"), "--quiet"]) == 1
        err = capsys.readouterr().err
        first_row = 1 if sheet.suffix == ".jsonl" else 2
        assert f"{sheet}:{first_row}: item item-" in err and "this sheet comes from another export" in err, err
        assert "more rows)" in err and not (tmp_path / "wrong").exists()
    # with its own key the same sheets import; the same sheet twice would count one grader double
    assert main(["grade", "import", str(demo_run), "--key", str(first / "key.json"), "--sheet", str(csv_sheet),
                 "--sheet", str(jsonl_sheet), "--out", str(tmp_path / "right"), "--quiet"]) == 0
    assert main(["grade", "import", str(demo_run), "--key", str(first / "key.json"), "--sheet", str(csv_sheet),
                 "--sheet", str(csv_sheet), "--quiet"]) == 1
    assert f"{csv_sheet}: given twice" in capsys.readouterr().err


def test_an_export_does_not_replace_an_earlier_one_without_force(demo_run, tmp_path, capsys):
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    key = (sheets / "key.json").read_bytes()
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "9"]) == 1
    err = capsys.readouterr().err
    assert f"{sheets} already holds sheet.csv, sheet.jsonl, rubric.md, key.json of an earlier export" in err
    assert "give --force to replace them" in err and (sheets / "key.json").read_bytes() == key
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "9", "--force"]) == 0
    assert (sheets / "key.json").read_bytes() != key
    # --force in another format leaves nothing of the earlier export beside the new key (its sheet.jsonl stayed)
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "10", "--force", "--format",
                 "csv"]) == 0
    assert sorted(p.name for p in sheets.iterdir()) == ["key.json", "rubric.md", "sheet.csv"]


def test_grading_never_overwrites_peoples_card_or_its_labels_and_checks_its_inputs_before_grading(
        demo_run, tmp_path, capsys, monkeypatch):
    """Before, --out over a people's grading card replaced it (also when it was the --labels compared with), --out
    naming a file ended in a FileExistsError traceback after the grading, and a --labels that could not be read was
    found only once every item had been graded (paid for, with an LLM grader)."""
    sheets, human = tmp_path / "sheets", tmp_path / "human"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    filled = fill_csv(sheets / "sheet.csv", {0: "4", 1: "2"})
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--out", str(human), "--quiet"]) == 0
    people = (human / "grading-card.json").read_bytes()
    capsys.readouterr()
    assert grade(demo_run, "--grader", str(RULES), "--out", str(human),
                 "--labels", str(human / "grading-card.json")) == 1
    assert "is the grading card this grading would write over: give another --out" in capsys.readouterr().err
    assert grade(demo_run, "--grader", str(RULES), "--out", str(human)) == 1
    assert "holds the grading of people's sheets; writing this one there would replace it" in \
        capsys.readouterr().err
    assert (human / "grading-card.json").read_bytes() == people
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "machine")) == 0
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "machine")) == 0  # (the same grader again)
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    for command in (["grade", str(demo_run), "--grader", str(RULES), "--out", str(a_file)],
                    ["grade", "export", str(demo_run), "--out", str(a_file)],
                    ["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                     "--out", str(a_file)]):
        assert main(command) == 1
        assert f"--out {a_file} is a file, not a directory" in capsys.readouterr().err
    called = []
    import mt_eval.decisions.grading as grading

    monkeypatch.setattr(grading, "decide_rows", lambda *args, **kwargs: called.append(1))
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "g"),
                 "--labels", str(tmp_path / "no-such-labels.jsonl")) == 1
    assert "cannot read the labels" in capsys.readouterr().err and called == []


@pytest.mark.parametrize("bad", ["list-item", "huge-cell", "directory"])
def test_a_sheet_that_cannot_be_read_is_named_not_a_traceback(demo_run, tmp_path, capsys, bad: str):
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    if bad == "list-item":
        sheet = tmp_path / "list.jsonl"
        sheet.write_text(json.dumps({"item": ["item-0001"], "answer": "3"}) + "\n")
        words = 'item ["item-0001"] is not in the key'
    elif bad == "huge-cell":
        sheet = tmp_path / "huge.csv"
        sheet.write_text("item,adequacy\n" + "item-0001," + "x" * 200_000 + "\n")
        words = "not a CSV sheet: field larger than field limit"
    else:
        sheet = tmp_path / "a-directory"
        sheet.mkdir()
        words = "cannot read it: Is a directory"
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(sheet),
                 "--quiet"]) == 1
    assert words in capsys.readouterr().err


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
