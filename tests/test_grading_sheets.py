"""`mt-eval grade export` and `grade import`: grading by people through sheets mapped back to the entries by their
key, labels that must be people's, and what is refused (sheets that cannot be read, output that would replace
another grading)."""

from __future__ import annotations

import csv
import json

import pytest

from grading_support import RULES, fill_csv, grade, grading_card
from mt_eval.cli import main


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


def test_peoples_grading_card_edited_after_it_was_sealed_is_no_labels(demo_run, tmp_path, capsys):
    """Before, an edited card was taken as it was: the grader was measured against grades nobody gave."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    filled = fill_csv(sheets / "sheet.csv", {0: "4", 1: "2"})
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--out", str(tmp_path / "human"), "--quiet"]) == 0
    people = json.loads((tmp_path / "human" / "grading-card.json").read_text())
    graded = next(e for e in people["entries"] if e["distribution"] is not None)
    graded["distribution"] = {name: float(i == 0) for i, name in enumerate(graded["distribution"])}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(people))
    capsys.readouterr()
    assert grade(demo_run, "--grader", str(RULES), "--out", str(tmp_path / "g"), "--labels", str(edited)) == 1
    assert f"{edited} does not verify: it was changed after `mt-eval grade import` sealed it" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_a_blank_sheet_imports_with_nothing_failed(demo_run, tmp_path, capsys):
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet",
                 str(sheets / "sheet.csv"), "--out", str(tmp_path / "human")]) == 0
    summary = grading_card(tmp_path / "human")["summary"]
    assert (summary["graded"], summary["failed"], summary["unanswered"]) == (0, 0, 30)
    shown = capsys.readouterr()
    assert "0 graded, 0 failed, 0 not graded (not translated), 30 not answered on any sheet" in shown.out
    assert shown.err == ""  # (an item not answered is no failure)


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
    assert f'{filled}:2: row {first_item}, question "adequacy": the answer "five" is not an option' in err
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


def test_a_key_whose_rubric_was_edited_is_refused(demo_run, tmp_path, capsys):
    """The key's rubric is what import grades on: before, one edited in key.json graded the sheets on levels or
    words the graders never saw, and the grading card still named the exported rubric's hash."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    filled = fill_csv(sheets / "sheet.csv", {0: "4", 1: "2"})
    key = json.loads((sheets / "key.json").read_text(encoding="utf-8"))
    for edit in ("instructions", "level"):
        edited = json.loads(json.dumps(key))
        if edit == "instructions":
            edited["rubric"]["instructions"] = "Rate fluency only."
        else:
            edited["rubric"]["levels"][4]["description"] = "Anything readable."
        (sheets / "key.json").write_text(json.dumps(edited, indent=2), encoding="utf-8")
        assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                     "--out", str(tmp_path / "human"), "--quiet"]) == 1
        err = capsys.readouterr().err
        assert (f"{sheets / 'key.json'} does not verify: its rubric was changed after `mt-eval grade export` wrote it"
                in err), err
        assert "import with the key.json as export wrote it (to grade on another rubric, export again" in err
        assert not (tmp_path / "human").exists()
    # the same key saved again in another layout is the same key; a key exported before keys held the rubric's own
    # hash cannot be checked and is read as it was
    (sheets / "key.json").write_text(json.dumps(key), encoding="utf-8")
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--out", str(tmp_path / "human"), "--quiet"]) == 0
    older = {field: value for field, value in key.items() if field != "rubric_content_sha256"}
    (sheets / "key.json").write_text(json.dumps(older), encoding="utf-8")
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--out", str(tmp_path / "older"), "--quiet"]) == 0


def test_a_jsonl_sheet_whose_question_was_edited_is_refused(demo_run, tmp_path, capsys):
    """Each line of a JSONL sheet carries the question asked; before, a line whose question was changed (a grader who
    answered another question) was imported as an answer to the rubric's. A sheet of items and answers alone, without
    the question, is still taken as it was, and a CSV sheet asks by its column's name, which its header must have."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    lines = [json.loads(line) for line in (sheets / "sheet.jsonl").read_text(encoding="utf-8").splitlines()]
    for line in lines[:3]:
        line["answer"] = "3"
    lines[1]["question"]["adequacy"]["instructions"] = "How fluent is the candidate?"
    lines[2]["question"] = {"fluency": lines[2]["question"]["adequacy"]}
    sheet = tmp_path / "ana.jsonl"
    sheet.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(sheet),
                 "--out", str(tmp_path / "human"), "--quiet"]) == 1
    err = capsys.readouterr().err
    item = lines[1]["item"]
    assert f"{sheet}:2: item {item} shows another question than this export's item {item} (and 1 more rows)" in err
    assert "or was edited; import it with the key.json exported beside it, its texts and question as the" in err
    assert not (tmp_path / "human").exists()
    for line in lines:
        del line["question"]
    sheet.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(sheet),
                 "--out", str(tmp_path / "human"), "--quiet"]) == 0
    assert grading_card(tmp_path / "human")["summary"]["graded"] == 3


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


@pytest.mark.parametrize("bad", ["list-item", "huge-cell", "directory", "too-deep", "latin-1"])
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
        words = "cannot be read as CSV (field larger than field limit"
    elif bad == "too-deep":  # (a RecursionError traceback)
        sheet = tmp_path / "deep.jsonl"
        sheet.write_text('{"item": "item-0001", "answer": ' + "[" * 10_000 + "]" * 10_000 + "}\n")
        words = f"{sheet}:1: arrays and objects nested too deep to read: a sheet's line is {{\"item\", \"answer\", "
    elif bad == "latin-1":  # (as spreadsheets save a sheet; it was Python's UnicodeDecodeError in words; UTF-16 with
        # its byte order mark is read: test_grading_sheet_reading.py)
        sheet = tmp_path / "saved.csv"
        text = "item,adequacy,comment\nitem-0001,3,très bien\n"
        sheet.write_bytes(text.encode("latin-1"))
        where = "0xe8 at line 2 (offset 36)"
        words = f"{sheet}: not valid UTF-8: byte {where}: save the sheet as UTF-8 (a spreadsheet's \"CSV UTF-8\")"
    else:
        sheet = tmp_path / "a-directory"
        sheet.mkdir()
        words = "cannot read it: Is a directory"
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(sheet),
                 "--quiet"]) == 1
    assert words in capsys.readouterr().err


def test_a_key_of_a_version_this_mt_eval_does_not_read_is_refused(demo_run, tmp_path, capsys):
    """Before: a "grading-key/9" key was imported as if it were "grading-key/1"."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    key = json.loads((sheets / "key.json").read_text())
    assert key["key_version"] == "grading-key/1"
    (sheets / "key.json").write_text(json.dumps({**key, "key_version": "grading-key/9"}))
    filled = fill_csv(sheets / "sheet.csv", {0: "4"})
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(filled),
                 "--out", str(tmp_path / "graded"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{sheets / 'key.json'}: this key's version is 'grading-key/9'; mt-eval " in err
    assert "reads 'grading-key/1': import the sheets with the mt-eval version that exported them" in err
    assert not (tmp_path / "graded").exists()


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_a_sheet_without_references_is_not_imported_as_graded_with_them(demo_run, tmp_path, capsys, form):
    """Two exports of one run with one seed number their items alike: a sheet of the --no-reference one, imported
    with the other's key, was recorded as graded by people who saw the references."""
    shown, withheld = tmp_path / "shown", tmp_path / "withheld"
    assert main(["grade", "export", str(demo_run), "--out", str(shown), "--seed", "8"]) == 0
    assert main(["grade", "export", str(demo_run), "--out", str(withheld), "--seed", "8", "--no-reference"]) == 0
    if form == "csv":
        sheet = fill_csv(withheld / "sheet.csv", {0: "4", 1: "2"})
    else:
        lines = [json.loads(line) for line in (withheld / "sheet.jsonl").read_text().splitlines()]
        lines[0]["answer"] = "3"
        sheet = tmp_path / "withheld.jsonl"
        sheet.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["grade", "import", str(demo_run), "--key", str(shown / "key.json"), "--sheet", str(sheet),
                 "--out", str(tmp_path / "wrong"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{sheet}: no reference on this sheet, but its key was exported with references" in err, err
    assert "--no-reference export?" in err and not (tmp_path / "wrong").exists()
    assert main(["grade", "import", str(demo_run), "--key", str(withheld / "key.json"), "--sheet", str(sheet),
                 "--out", str(tmp_path / "right"), "--quiet"]) == 0
    assert grading_card(tmp_path / "right")["blinding"]["with_reference"] is False


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_a_sheet_whose_references_are_all_blank_is_not_imported_as_graded_with_them(demo_run, tmp_path, capsys, form):
    """A reference column kept but emptied (every cell blank, or "" in every row's state) shows the graders no more
    references than one removed: the grading card would say they saw them."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    if form == "csv":
        with fill_csv(sheets / "sheet.csv", {0: "4", 1: "2"}).open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        sheet = tmp_path / "blank.csv"
        with sheet.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows({**row, "reference": ""} for row in rows)
    else:
        rows = [json.loads(line) for line in (sheets / "sheet.jsonl").read_text().splitlines()]
        rows[0]["answer"] = "3"
        sheet = tmp_path / "blank.jsonl"
        sheet.write_text("".join(json.dumps({**row, "state": {**row["state"], "reference": ""}}) + "\n"
                                 for row in rows))
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(sheet),
                 "--out", str(tmp_path / "wrong"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{sheet}: no reference on this sheet, but its key was exported with references" in err, err
    assert "a reference column a grader removed or emptied: put it back" in err and not (tmp_path / "wrong").exists()


def test_a_sheet_of_items_and_answers_alone_imports_with_a_key_that_showed_references(demo_run, tmp_path):
    """A tool that writes only each item and its answer shows no texts at all: nothing tells which export it answered,
    and it is taken as before, not refused as a --no-reference export's sheet."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    rows = [json.loads(line) for line in (sheets / "sheet.jsonl").read_text().splitlines()]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"item": rows[0]["item"], "answer": "3"}) + "\n")
    table = tmp_path / "answers.csv"
    table.write_text(f"item,adequacy\n{rows[1]['item']},4\n")
    assert main(["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(answers),
                 "--sheet", str(table), "--out", str(tmp_path / "human"), "--quiet"]) == 0
    assert grading_card(tmp_path / "human")["summary"]["graded"] == 2


@pytest.mark.parametrize(("words", "said"), [
    (["import", "--key", "k.json", "--sheet", "s.csv", "--rubric", "r.json", "--seed", "0"],
     "--rubric and --seed: not used by `mt-eval grade import` (the rubric, the shuffle seed and whether references "
     "were shown are the export's, read from --key)"),
    (["import", "--key", "k.json", "--sheet", "s.csv", "--no-reference"], "--no-reference: not used by `mt-eval grade "
     "import`"),
    (["export", "--out", "sheets", "--labels", "labels.jsonl"], "--labels: not used by `mt-eval grade export`"),
    (["--grader", str(RULES), "--sheet", "s.csv"], "--sheet: not used by `mt-eval grade CARD --grader DIR` (`mt-eval "
     "grade import` reads people's sheets)"),
])
def test_an_option_the_mode_does_not_use_is_refused_not_dropped(demo_run, tmp_path, capsys, words, said):
    """Before, `grade import --rubric other.json` imported on the export's rubric, saying nothing of the one given."""
    mode = [words.pop(0)] if words[0] in ("export", "import") else []
    args = ["grade", *mode, str(demo_run), *(str(tmp_path / w) if w.endswith((".json", ".csv", ".jsonl", "sheets"))
                                             else w for w in words)]
    assert main(args) == 2
    assert said in capsys.readouterr().err
    assert not (demo_run.parent / "grading").exists() and not (tmp_path / "sheets").exists()
