"""`mt-eval grade import` reading people's sheets as they come back from spreadsheets and hand edits: what is
refused (a quote never closed, a column named twice, a row of too many or too few cells, a copy of another
sheet, a number that names no level) and what is read as meant (an empty trailing row, a stray space)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from grading_support import REPO, RULES, fill_csv, grading_card
from mt_eval.cli import main


@pytest.fixture(scope="module")
def export(demo_run, tmp_path_factory) -> Path:
    sheets = tmp_path_factory.mktemp("export") / "sheets"
    assert main(["grade", "export", str(demo_run), "--out", str(sheets), "--seed", "8"]) == 0
    return sheets


def import_sheets(card: Path, export: Path, *sheets: Path, out: Path) -> int:
    args = [arg for sheet in sheets for arg in ("--sheet", str(sheet))]
    return main(["grade", "import", str(card), "--key", str(export / "key.json"), *args, "--out", str(out),
                 "--force", "--quiet"])


def all_answered(export: Path, level: str, tmp_path: Path) -> list[str]:
    """The lines of a CSV sheet with every item answered ``level``."""
    filled = fill_csv(export / "sheet.csv", dict.fromkeys(range(30), level))
    return filled.read_text(encoding="utf-8").splitlines()


def commented(export: Path, level: str, comment: str, sheet: Path) -> list[str]:
    """A sheet with every item answered ``level``, the first row's comment cell ``comment`` (its lines, to change
    further, and written to ``sheet``)."""
    lines = all_answered(export, level, sheet.parent)
    lines[1] += comment
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def test_a_quote_never_closed_in_a_comment_refuses_the_sheet_naming_its_line(demo_run, export, tmp_path, capsys):
    """Before, the following lines were read into that comment: their grades were lost, and the import passed."""
    sheet = tmp_path / "quote.csv"
    lines = commented(export, "4", '"good but see ""note', sheet)
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 1
    err = capsys.readouterr().err
    assert f"{sheet}:2: the row starting here cannot be read as CSV" in err and "never closed?" in err, err
    assert not (tmp_path / "g").exists()
    # closed further down (before a comma), the swallowed lines make a row of too many cells
    lines[4] = lines[4].replace(",", '",', 1)
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 1
    assert f"{sheet}:2: " in capsys.readouterr().err and not (tmp_path / "g").exists()


def test_a_comment_over_several_lines_in_quotes_is_one_row(demo_run, export, tmp_path, capsys):
    sheet = tmp_path / "multi.csv"
    commented(export, "3", '"two lines,\nof ""comment"""', sheet)
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 0
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30


def test_a_column_named_twice_or_a_row_of_other_cells_is_refused(demo_run, export, tmp_path, capsys):
    rows = list(csv.reader(all_answered(export, "4", tmp_path)))
    doubled = tmp_path / "doubled.csv"
    with doubled.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([[*rows[0], "adequacy"], *([*row, ""] for row in rows[1:])])
    assert import_sheets(demo_run, export, doubled, out=tmp_path / "g") == 1
    assert f'{doubled}:1: the column "adequacy" appears more than once in the header' in capsys.readouterr().err
    short = tmp_path / "short.csv"
    with short.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([rows[0], rows[1][:-2], *rows[2:5], [*rows[5], "extra"], *rows[6:]])
    assert import_sheets(demo_run, export, short, out=tmp_path / "g") == 1
    err = capsys.readouterr().err
    assert f"{short}:2: {len(rows[0]) - 2} cells where the header has {len(rows[0])}" in err, err
    assert f"{short}:6: {len(rows[0]) + 1} cells where the header has" in err
    assert not (tmp_path / "g").exists()


def test_an_empty_trailing_row_and_a_stray_space_are_read_as_meant(demo_run, export, tmp_path, capsys):
    lines = all_answered(export, "2", tmp_path)
    lines[1] = " " + lines[1]
    sheet = tmp_path / "spreadsheet.csv"
    sheet.write_text("\r\n".join([*lines, ",,,,,,,", ""]), encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 0
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30


def test_a_copy_of_a_sheet_under_another_name_counts_once(demo_run, export, tmp_path, capsys):
    """Before, a saved-again copy ("ana (1).csv") counted as a third grader and moved every mean."""
    ana, ben = tmp_path / "ana.csv", tmp_path / "ben.csv"
    ana.write_text("\n".join(all_answered(export, "4", tmp_path)) + "\n", encoding="utf-8")
    ben.write_text("\n".join(all_answered(export, "0", tmp_path)) + "\n", encoding="utf-8")
    copy = tmp_path / "ana (1).csv"
    copy.write_bytes(ana.read_bytes())
    assert import_sheets(demo_run, export, ana, ben, copy, out=tmp_path / "g") == 1
    assert f"{copy}: a copy of {ana} (the same bytes): each grader's sheet counts once" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()
    assert import_sheets(demo_run, export, ana, ben, out=tmp_path / "g") == 0
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30


@pytest.mark.parametrize(("answer", "accepted"), [("4", True), ("4.0", True), ("3.9999999", False),
                                                   ("-0.0000001", False), ("1" + "0" * 400, False), ("1e400", False)])
def test_a_number_answer_in_jsonl_names_a_level_only_exactly(demo_run, export, tmp_path, capsys, answer, accepted):
    """Before, 3.9999999 was taken as level 4 and a 400-digit integer was a traceback."""
    lines = (export / "sheet.jsonl").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"answer": null', f'"answer": {answer}')
    sheet = tmp_path / "numbers.jsonl"
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == (0 if accepted else 1)
    err = capsys.readouterr().err
    if accepted:
        assert grading_card(tmp_path / "g")["summary"]["graded"] == 1
    else:
        assert f'{sheet}:1: row item-0001, question "adequacy": the answer "' in err and "is not an option" in err, err
        assert "Traceback" not in err


def test_labels_may_name_entries_by_integer_ids_as_the_corpus_does(tmp_path, capsys):
    """Before, every label of a corpus with integer ids was refused, the message not saying why."""
    demo = json.loads((REPO / "examples" / "data" / "eng-spa-demo.json").read_text(encoding="utf-8"))
    plain = [e for e in demo["entries"] if "family" not in e][:6]
    corpus = tmp_path / "ints.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "source": e["source"], "reference": e["reference"]}) + "\n"
                              for i, e in enumerate(plain, 1)), encoding="utf-8")
    assert main(["run", "--method", str(REPO / "examples" / "lexicon-eng-spa"), "--corpus", str(corpus),
                 "--out", str(tmp_path / "run"), "--quiet", "--resamples", "50"]) == 5  # (no headline: too few entries)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": i, "label": "3"}) + "\n" for i in range(1, 7)), encoding="utf-8")
    assert main(["grade", str(tmp_path / "run" / "card.json"), "--grader", str(RULES), "--labels", str(labels),
                 "--out", str(tmp_path / "g"), "--quiet", "--resamples", "50"]) == 0, capsys.readouterr().err
    assert grading_card(tmp_path / "g")["quality"]["entries"] == 6
    labels.write_text(json.dumps({"id": True, "label": "3"}) + "\n", encoding="utf-8")
    assert main(["grade", str(tmp_path / "run" / "card.json"), "--grader", str(RULES), "--labels", str(labels),
                 "--out", str(tmp_path / "g2"), "--quiet"]) == 1
    assert "(a string or an integer)" in capsys.readouterr().err


def test_a_csv_sheet_saved_under_another_name_is_told_to_be_named_csv(demo_run, export, tmp_path, capsys):
    sheet = tmp_path / "ana.txt"
    sheet.write_text("\n".join(all_answered(export, "4", tmp_path)) + "\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 1
    err = capsys.readouterr().err
    assert f"{sheet}: a table, not JSONL: a sheet is read as CSV only when its name ends in .csv" in err
    assert ": not JSON:" not in err


def test_a_jsonl_sheet_line_holding_an_integer_beyond_what_int_reads_is_named_as_one(demo_run, export, tmp_path,
                                                                                    capsys):
    sheet = tmp_path / "ana.jsonl"
    sheet.write_text('{"item": 1, "answer": "4", "note": 1' + "0" * 5000 + "}\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") != 0
    err = capsys.readouterr().err
    assert (f"{sheet}:1: holds an integer of 5,001 digits, more than can be read (4,300 at most): write it as a "
            "string, in double quotes, or remove it") in err
    assert "not JSON" not in err and "set_int_max_str_digits" not in err


@pytest.mark.parametrize(("delimiter", "encoding"), [(";", "utf-8-sig"), ("\t", "utf-8"), ("\t", "utf-16")])
def test_a_sheet_a_spreadsheet_saved_with_semicolons_or_tabs_is_read_as_one_with_commas(demo_run, export, tmp_path,
                                                                                      capsys, delimiter, encoding):
    """Spreadsheets in many locales save CSV with semicolons (and a byte order mark), and "Unicode text" as UTF-16
    with TABs. Before, such a sheet was refused as one without the columns "item" and "adequacy", though its header
    named them (or as not UTF-8)."""
    with (export / "sheet.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    sheet = tmp_path / "saved.csv"
    with sheet.open("w", encoding=encoding, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows([{**row, "adequacy": str(i % 5)} for i, row in enumerate(rows)])
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 0, capsys.readouterr().err
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30
    commas = fill_csv(export / "sheet.csv", {i: str(i % 5) for i in range(30)})
    assert import_sheets(demo_run, export, commas, out=tmp_path / "g2") == 0
    assert grading_card(tmp_path / "g")["summary"] == grading_card(tmp_path / "g2")["summary"]


def test_a_sheet_without_its_answer_column_is_refused_naming_the_columns_it_has(demo_run, export, tmp_path, capsys):
    with (export / "sheet.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    sheet = tmp_path / "renamed.csv"
    with sheet.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["item", "score"])
        writer.writeheader()
        writer.writerows([{"item": row["item"], "score": "4"} for row in rows])
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 1
    assert (f'{sheet}: a sheet has the columns "item" and "adequacy" (as `mt-eval grade export` wrote it); its first '
            'line has "item", "score"') in capsys.readouterr().err


def test_a_sheet_that_starts_as_utf16_but_is_cut_short_is_refused_as_such(demo_run, export, tmp_path, capsys):
    sheet = tmp_path / "cut.csv"
    sheet.write_bytes((export / "sheet.csv").read_text(encoding="utf-8").encode("utf-16")[:-1])
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 1
    assert f"{sheet}: not valid UTF-16 (it starts as UTF-16 does), at byte " in capsys.readouterr().err


def first_item_level(out: Path) -> str | None:
    """The level the grading card in ``out`` gives the sheet's first item."""
    return next(entry["level"] for entry in grading_card(out)["entries"] if entry["item"] == "item-0001")


@pytest.mark.parametrize(("answer", "level"), [("3.0", "3"), ("3,0", "3"), ("4.00", "4"), ("3.5", None)])
def test_a_level_a_spreadsheet_saved_as_a_decimal_names_that_level_exactly(demo_run, export, tmp_path, capsys,
                                                                          answer, level):
    """A column formatted as numbers is saved as "3.00" (or "3,0" in many locales). Before, such an answer was
    refused in a CSV sheet, though the same 3.0 names level 3 in a JSONL sheet."""
    sheet = fill_csv(export / "sheet.csv", {i: answer if i == 0 else "2" for i in range(30)})
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == (0 if level else 1)
    if level:
        assert first_item_level(tmp_path / "g") == level
    else:
        assert (f'{sheet}:2: row item-0001, question "adequacy": the answer "3.5" is not an option of this question'
                in capsys.readouterr().err)


def test_a_header_retyped_in_another_case_or_with_spaces_is_read_as_the_exported_columns(demo_run, export, tmp_path,
                                                                                       capsys):
    """Before, a sheet whose header read "Item" or " Adequacy " was refused as one without those columns."""
    lines = all_answered(export, "4", tmp_path)
    lines[0] = lines[0].replace("item,", "Item,").replace(",adequacy,", ", Adequacy ,")
    sheet = tmp_path / "retyped.csv"
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 0, capsys.readouterr().err
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 30
    lines[0] = lines[0].replace("Item,", "Item,item,", 1)
    lines[1:] = [line.replace(",", ",x,", 1) for line in lines[1:]]
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g2") == 1
    assert f'{sheet}:1: the column "item" appears more than once in the header' in capsys.readouterr().err


def test_a_jsonl_answer_left_empty_or_spaced_is_read_as_a_csv_cell_is(demo_run, export, tmp_path, capsys):
    """The rubric tells graders to leave an answer empty to skip an item. Before, an empty JSONL answer was refused
    as no option, and " 3" too, though a CSV sheet reads both as meant."""
    lines = (export / "sheet.jsonl").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"answer": null', '"answer": " 3"')
    lines[1] = lines[1].replace('"answer": null', '"answer": ""')
    sheet = tmp_path / "skipped.jsonl"
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 0, capsys.readouterr().err
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 1
    assert first_item_level(tmp_path / "g") == "3"


def test_the_rubric_tells_jsonl_graders_a_distribution_gives_every_level_a_probability(demo_run, tmp_path):
    """Before, it showed {"label": probability, ...}, and a sheet answering {"3": 0.5, "4": 0.5} was refused."""
    assert main(["grade", "export", str(demo_run), "--out", str(tmp_path / "s"), "--format", "jsonl"]) == 0
    assert "giving every level a probability, the probabilities summing to 1" in (
        tmp_path / "s" / "rubric.md").read_text(encoding="utf-8")



@pytest.mark.parametrize("question_column", ["a note", "the answers"])
def test_a_csv_sheet_asks_by_its_column_whatever_other_columns_it_has(demo_run, export, tmp_path, capsys,
                                                                      question_column):
    """Only a JSONL line carries the question to compare with the export's: a CSV column "question" a grader added
    for notes, or that of a rubric named "question" (its answers), is no edited question."""
    if question_column == "the answers":
        rubric = json.loads((REPO / "sdk" / "mt_eval" / "decisions" / "rubrics" / "adequacy-0-4.json").read_text())
        (tmp_path / "rubric.json").write_text(json.dumps({**rubric, "name": "question"}), encoding="utf-8")
        export = tmp_path / "sheets"
        assert main(["grade", "export", str(demo_run), "--out", str(export), "--rubric", str(tmp_path / "rubric.json"),
                     "--format", "csv"]) == 0
    with (export / "sheet.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    answered = "question" if question_column == "the answers" else "adequacy"
    sheet = tmp_path / "noted.csv"
    with sheet.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*rows[0], *(["question"] if answered == "adequacy" else [])])
        writer.writeheader()
        writer.writerows([{**row, answered: "4", "question": "4" if answered == "question" else "clear?"}
                          for row in rows[:2]])
    assert import_sheets(demo_run, export, sheet, out=tmp_path / "g") == 0, capsys.readouterr().err
    assert grading_card(tmp_path / "g")["summary"]["graded"] == 2
