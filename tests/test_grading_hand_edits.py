"""JSONL sheets and labels edited by hand: a key written twice, a key renamed or misspelled, both of two keys given.
Each is refused with its line, not read as something else without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grading_support import RULES, fill_csv, grade, grading_card
from mt_eval.cli import main


@pytest.fixture(scope="module")
def export(demo_run, tmp_path_factory) -> Path:
    sheets = tmp_path_factory.mktemp("export") / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8", "--format", "jsonl"]) == 0
    return sheets


def answered(export: Path, level: str) -> list[str]:
    """The JSONL sheet's lines, every item answered ``level``."""
    lines = (export / "sheet.jsonl").read_text(encoding="utf-8").splitlines()
    return [line.replace('"answer": null', f'"answer": "{level}"') for line in lines]


def imported(card: Path, export: Path, lines: list[str], out: Path) -> int:
    sheet = out.parent / f"{out.name}.jsonl"
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return main(["grade", "import", str(card), "--key", str(export / "key.json"), "--sheet", str(sheet),
                 "--out", str(out), "--quiet"])


def test_a_jsonl_sheet_line_that_writes_its_answer_twice_is_refused(demo_run, export, tmp_path, capsys):
    """Before, `"answer": "2", "answer": "3"` was read as "3" without a word (a corpus's line is refused)."""
    lines = answered(export, "2")
    lines[2] = lines[2].replace('"answer": "2"', '"answer": "2", "answer": "3"')
    assert imported(demo_run, export, lines, tmp_path / "twice") == 1
    err = capsys.readouterr().err
    assert f'{tmp_path / "twice.jsonl"}:3: key "answer" appears more than once in an object: keep one of them' in err
    assert not (tmp_path / "twice" / "grading-card.json").exists()


@pytest.mark.parametrize("renamed", ["Answer", "anwser"])
def test_a_jsonl_sheet_whose_answer_key_was_renamed_is_refused_not_read_as_unanswered(
        demo_run, export, tmp_path, capsys, renamed):
    """Before, every line's answer under another key was dropped: exit 0, a grading card with nothing graded."""
    lines = [line.replace('"answer":', f'"{renamed}":') for line in answered(export, "3")]
    assert imported(demo_run, export, lines, tmp_path / "renamed") == 1
    err = capsys.readouterr().err
    assert (f'{tmp_path / "renamed.jsonl"}:1: no "answer" on this line (it has "item", "state", "question", '
            f'"{renamed}") (and 29 more lines): write each answer under "answer"') in err
    assert err.count('no "answer"') == 1  # (said once for the sheet, not once a line)


def test_a_jsonl_sheet_of_items_and_answers_alone_still_imports(demo_run, export, tmp_path):
    lines = [json.dumps({"item": json.loads(line)["item"], "answer": "4"}) for line in answered(export, "4")[:3]]
    assert imported(demo_run, export, lines, tmp_path / "alone") == 0
    assert grading_card(tmp_path / "alone")["summary"]["graded"] == 3


@pytest.mark.parametrize(("line", "said"), [
    ('{"id": "demo-01", "label": "4", "label": "0"}',
     ':1: key "label" appears more than once in an object: keep one of them'),
    ('{"id": "demo-01", "label": "4", "distribution": {"0": 0, "1": 0, "2": 0, "3": 0.5, "4": 0.5}}',
     ':1 (entry "demo-01"): both "label" and "distribution": give one of them'),
    ('{"id": "demo-01", "lable": "4"}',
     ':1 (entry "demo-01"): no "label" or "distribution" (the line has "id", "lable"): give the level as "label"'),
])
def test_labels_edited_by_hand_are_refused_naming_the_line(demo_run, tmp_path, capsys, line, said):
    """Before, a label written twice was its last, a distribution beside a label won unsaid, and a misspelled key
    was refused as "a gold answer is an option's name or a distribution", not naming the key."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text(line + '\n{"id": "demo-02", "label": "3"}\n', encoding="utf-8")
    assert grade(demo_run, "--grader", str(RULES), "--labels", str(labels), "--out", str(tmp_path / "g")) == 1
    assert f"{labels}{said}" in capsys.readouterr().err


def test_a_csv_sheet_with_cr_line_ends_as_a_mac_spreadsheet_saves_it_is_read(demo_run, tmp_path, capsys):
    """Excel for Mac saves "Comma Separated Values" with a CR alone at each line's end. Before, reading the sheet
    ended in a traceback (`_csv.Error: new-line character seen in unquoted field`)."""
    sheets = tmp_path / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8", "--format", "csv"]) == 0
    filled = fill_csv(sheets / "sheet.csv", dict.fromkeys(range(30), "3"))
    rows = filled.read_text(encoding="utf-8").splitlines()
    rows[1] += '"fine,\r\nbut ""stiff"""'  # (its comment cell: quoted, a line break and quotes in it)
    rows[4] = rows[4].replace(",3,", ",thre,")  # (its line 6: the comment above takes two)
    mac = tmp_path / "mac.csv"
    mac.write_bytes("\r".join(rows).encode("utf-8") + b"\r")
    args = ["grade", "import", str(demo_run), "--key", str(sheets / "key.json"), "--sheet", str(mac), "--quiet"]
    assert main([*args, "--out", str(tmp_path / "g")]) == 1
    assert f'{mac}:6: row item-0004, question "adequacy": the answer "thre" is not an option' in capsys.readouterr().err
    rows[4] = rows[4].replace(",thre,", ",3,")
    mac.write_bytes("\r".join(rows).encode("utf-8") + b"\r")
    assert main([*args, "--out", str(tmp_path / "g")]) == 0
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30


def test_an_item_answered_twice_names_both_lines(demo_run, export, tmp_path, capsys):
    """Before, only the second line was named: which of the two rows to keep was left to find."""
    lines = answered(export, "3")
    lines.insert(5, lines[2].replace('"answer": "3"', '"answer": "1"'))
    assert imported(demo_run, export, lines, tmp_path / "twice") == 1
    assert (f"{tmp_path / 'twice.jsonl'}:6: row {json.loads(lines[2])['item']} is answered twice in this sheet (first "
            "on line 3): keep one of the two rows") in capsys.readouterr().err


def test_a_key_of_another_run_says_what_to_import_with(demo_run, export, tmp_path, capsys):
    other = tmp_path / "other"
    assert main(["run", "--demo", "--out", str(other), "--quiet", "--resamples", "50"]) == 0
    assert imported(other / "card.json", export, answered(export, "3"), tmp_path / "g") == 1
    assert ("import with the key.json exported beside the sheets, and the run card they were exported from"
            in capsys.readouterr().err)
