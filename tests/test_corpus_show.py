"""`mt-eval corpus show`: how a corpus is read, in text and JSON, and its exit statuses."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.cli.corpus import SHOW_EXAMPLES

REPO = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "corpora"


def show(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["corpus", "show", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def sha256(*names: str) -> str:
    return hashlib.sha256((FIXTURES / names[0]).read_bytes()).hexdigest()


@pytest.mark.parametrize(("args", "expected"), [
    (["two-column.tsv"], ["format      TSV without a header, read by the MT convention: source<TAB>reference",
                          "column 1: source", "column 2: reference", "ids         line numbers in the file",
                          "entries     3", '1  source     "Good morning, my friend!"',
                          'reference  "¡Buenos días, amigo mío!"']),
    (["comment-lines.tsv"], ["comments    lines 1, 3 (skipped)", "entries     3",
                             '4  source     "#MondayMotivation is trending."']),
    (["bom-crlf-header.tsv"], ["TSV with a header (line 1): source<TAB>reference", 'header "source"',
                               '2  source     "I like green apples."']),
    (["reference-free.tsv"], ["references  none: translation only, nothing is scored", "column 1: source",
                              "entries     3"]),
    (["three-column-header.tsv"], ["TSV with a header (line 1): id<TAB>source<TAB>reference",
                                   "ids         from the id column", 'news-1  source     "The bridge opened in May."']),
])
def test_show_says_how_each_file_is_read(capsys, args: list[str], expected: list[str]):
    code, out, err = show(capsys, str(FIXTURES / args[0]))
    assert code == 0 and err == ""
    for text in expected:
        assert text in out, out
    assert f"sha256      {sha256(args[0])}" in out


def test_show_parallel_text_names_both_files_and_keeps_empty_lines(capsys):
    code, out, _ = show(capsys, "--source-file", str(FIXTURES / "parallel.eng"),
                        "--reference-file", str(FIXTURES / "parallel.spa"))
    assert code == 0
    assert "parallel text, one segment per line: parallel.eng (sources) and parallel.spa (references)" in out
    assert f"(4 lines, sha256 {sha256('parallel.spa')})" in out and "entries     4" in out
    assert '2  source     ""' in out and "(over both files' sha256)" in out


def test_show_prints_null_references_and_values_of_any_type(capsys, tmp_path: Path):
    corpus = tmp_path / "null-references.jsonl"
    corpus.write_text('{"id": "a", "source": "Hi.", "reference": null, "note": null, "tags": ["x"]}\n'
                      '{"id": "b", "source": "Bye.", "reference": null, "note": "' + "long " * 20 + '"}\n')
    code, out, err = show(capsys, str(corpus))
    assert (code, err) == (0, ""), err
    assert "references  none: translation only, nothing is scored" in out
    assert out.count("reference  null") == 2 and "note       null" in out and 'tags       ["x"]' in out
    assert '"long long' in out and "…" in out


def test_show_json_has_the_columns_roles_entries_and_hash(capsys):
    code, out, _ = show(capsys, str(FIXTURES / "alias-header.tsv"), "--json", "--rows", "1")
    report = json.loads(out)
    assert code == 0
    assert report["columns"] == [
        {"column": 1, "field": "source", "role": "source", "header": "src"},
        {"column": 2, "field": "reference", "role": "reference", "header": "tgt"},
        {"column": 3, "field": "domain", "role": "extra", "header": "domain"}]
    assert report["aliases"] == {"src": "source", "tgt": "reference"}
    assert (report["entries"], report["references"], report["sha256"]) == (2, True, sha256("alias-header.tsv"))
    assert report["first"] == [{"id": "2", "source": "Open the window.", "reference": "Abre la ventana.",
                                "domain": "home"}]
    assert report["refused"] == [] and report["selection"] is None


def test_show_lists_integer_ids_as_given_and_a_selection_with_its_own_hash(capsys):
    code, out, _ = show(capsys, str(FIXTURES / "upstream.json"), "--ids", "2..10", "--json")
    report = json.loads(out)
    assert code == 0 and [e["id"] for e in report["first"]] == [2, 10]
    assert report["selection"]["entries_selected"] == 2 and report["selection"]["entries_in_corpus"] == 3
    assert report["selection"]["subset_sha256"] != report["sha256"]


def test_show_of_a_refused_file_says_what_was_detected_and_how_to_override(capsys):
    code, out, _ = show(capsys, str(FIXTURES / "old-three-column.tsv"))
    assert code == 1
    assert "refused: column 1 looks like ids ('1', '2')" in out
    assert "--columns id,source,reference" in out and "--accept-doubt first-column-ids" in out
    code, out, _ = show(capsys, str(FIXTURES / "old-three-column.tsv"), "--columns", "id,source,reference")
    assert code == 0 and "TSV with the columns given by --columns: id<TAB>source<TAB>reference" in out
    code, out, _ = show(capsys, str(FIXTURES / "swapped.tsv"), "--pair", "eng>rus")
    assert code == 1 and "look swapped" in out
    code, out, _ = show(capsys, str(FIXTURES / "misspelled-field.json"))
    assert code == 1 and "references  none: translation only" in out and 'refrence   "Hola."' in out
    assert 'refused: field "refrence" (first at $[0]) is not a name mt-eval reads' in out
    assert 'fix: did you mean "reference"? rename it' in out


@pytest.mark.parametrize(("args", "message"), [
    (["empty.tsv"], "empty.tsv: is empty (0 bytes)"),
    (["header-only.tsv"], "header-only.tsv: has no entries; the file holds only a header (line 1) and 1 comment "
                          "line; add entries"),
    (["spreadsheet.csv"], "unsupported format: use .json, .jsonl or .tsv"),
    (["no-such-corpus"], "no-such-corpus: cannot read corpus: No such file or directory; check the path"),
    (["no-such.csv"], "no-such.csv: cannot read corpus: No such file or directory; check the path"),
    (["stray-tab.tsv"], "line 2: 4 columns, but most lines have 2"),
    (["two-column.tsv", "--ids", "9"], '--ids: no entry has the id "9"'),
    (["lone-surrogate.json"], "lone-surrogate.json $[0].source: holds a lone surrogate (\\ud800)"),  # no traceback
    (["utf16-no-bom.tsv"], "iconv -f utf-16le -t utf-8 utf16-no-bom.tsv > utf16-no-bom.utf8.tsv"),
    (["jsonl-named-tsv.tsv"], "name the file .jsonl (one entry object per line)"),
    (["misspelled-header.tsv"], 'did you mean "reference"? correct the header'),
    (["wmt-sgml.sgm"], "holds its segments inside markup, which mt-eval does not read: extract the segments"),
    (["two-column.tsv", "--ids", ""], "--ids '' names no id"),
])
def test_show_of_an_unreadable_file_is_one_clear_error(capsys, args: list[str], message: str):
    code, out, err = show(capsys, str(FIXTURES / args[0]), *args[1:])
    assert code == 1 and out == "" and message in err


def test_show_without_a_file_prints_its_help_and_the_examples_work(capsys, monkeypatch):
    assert show(capsys)[0] == 2
    assert main(["corpus"]) == 2
    monkeypatch.chdir(REPO)
    first = SHOW_EXAMPLES.splitlines()[1]
    assert show(capsys, *shlex.split(first)[3:])[0] == 0


@pytest.mark.parametrize("name", ["deep.jsonl", "deep.json"])
def test_a_corpus_nested_too_deep_is_refused_in_one_line_as_run_refuses_it(capsys, tmp_path: Path, name: str):
    entry = '{"id": "1", "source": "Hi.", "reference": "Hola.", "x": ' + "[" * 1000 + "]" * 1000 + "}"
    corpus = tmp_path / name
    corpus.write_text(entry + "\n" if name.endswith(".jsonl") else f"[{entry}]")
    words = f"corpus {corpus}: arrays or objects nested too deeply to read; a corpus is a list of flat entries\n"
    assert show(capsys, str(corpus)) == (1, "", f"mt-eval corpus show: {words}")
    assert main(["run", "--method", str(REPO / "examples" / "lexicon-eng-spa"), "--corpus", str(corpus), "--pair",
                 "eng:spa", "--out", str(tmp_path / "run")]) == 1
    assert capsys.readouterr().err.endswith(f"mt-eval run: {words}")


def test_json_says_what_was_refused_in_a_corpus_that_cannot_be_read(capsys, tmp_path: Path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    code, out, err = show(capsys, str(empty), "--json")
    assert code == 1 and err.startswith(f"mt-eval corpus show: corpus {empty}: has no entries")
    assert json.loads(out) == {"file": str(empty), "readable": False, "refused": [
        {"message": "has no entries", "hint": 'add entries, one JSON object per line, e.g. {"id": "1", "source": '
                                               '"...", "reference": "..."}'}]}
    code, out, _ = show(capsys, str(FIXTURES / "two-column.tsv"), "--json")
    assert code == 0 and json.loads(out)["readable"] is True
    # a selection that cannot be made (stdout had been empty)
    code, out, err = show(capsys, str(FIXTURES / "two-column.tsv"), "--json", "--ids", "999")
    assert code == 1 and err.endswith('--ids: no entry has the id "999"; ids are matched exactly; mt-eval corpus '
                                      "show FILE lists the first ones\n")
    assert json.loads(out) == {"file": str(FIXTURES / "two-column.tsv"), "readable": True, "refused": [
        {"message": '--ids: no entry has the id "999"', "hint": "ids are matched exactly; mt-eval corpus show FILE "
                                                                "lists the first ones"}]}


def test_ids_and_field_names_with_control_characters_are_shown_escaped(tmp_path: Path, capsys):
    """Before: ids and extra fields' names reached the terminal raw (an ESC sequence retitled the window, cleared
    the screen; a line break broke the row), where values were escaped."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a\x1b[31mRED", "source": "Hello.", "reference": "Hola.", "k\x1b[2Jey": "v",
                                  "x\x9bq": 1, "plain": 2}) + "\n", encoding="utf-8")
    code, out, _ = show(capsys, str(corpus))
    assert code == 0 and "\x1b" not in out and "\x9b" not in out
    assert '  "a\\u001b[31mRED"  source     "Hello."' in out
    assert '"k\\u001b[2Jey"  "v"' in out and '"x\\x9bq"   1' in out and "plain      2" in out


@pytest.mark.parametrize("columns", ["source,", ",source,reference", "source,,reference"])
def test_a_column_left_without_a_name_in_columns_is_refused(tmp_path: Path, capsys, columns: str):
    """Before: `--columns source,` made the references an extra field handed to the method, and nothing was
    scored, without a word."""
    corpus = tmp_path / "c.tsv"
    corpus.write_text("Hello.\tHola.\nBye.\tAdiós.\n", encoding="utf-8")
    code, _, err = show(capsys, str(corpus), "--columns", columns)
    assert code == 1 and f"--columns {columns!r} leaves column" in err and "name every column" in err


def test_a_file_name_that_is_not_utf8_is_shown_with_its_escapes_in_valid_json(tmp_path: Path):
    """Its bytes are read as lone surrogates, which JSON and UTF-8 cannot carry: --json was a UnicodeEncodeError
    traceback, for a corpus read or refused (and so was the text, where standard output is strict UTF-8)."""
    directory = os.fsencode(tmp_path)
    with open(directory + b"/corpus-\xff.jsonl", "w", encoding="utf-8") as corpus:
        corpus.write(json.dumps({"id": "a", "source": "Hello.", "reference": "Hola."}) + "\n")
    with open(directory + b"/empty-\xfe.jsonl", "w", encoding="utf-8") as empty:
        empty.write("\n")

    def show_bytes(*args: bytes) -> tuple[int, str, str]:  # (as a terminal of en_US.UTF-8 runs it: stdout strict)
        done = subprocess.run([sys.executable.encode(), b"-m", b"mt_eval.cli", b"corpus", b"show", *args],
                              capture_output=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"})
        return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")

    escaped = f"{tmp_path}/corpus-\\udcff.jsonl"
    code, out, err = show_bytes(directory + b"/corpus-\xff.jsonl", b"--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["file"], report["name"], report["files"][0]["path"]) == (escaped, "corpus-\\udcff", escaped)
    assert report["first"] == [{"id": "a", "source": "Hello.", "reference": "Hola."}]
    code, out, err = show_bytes(directory + b"/corpus-\xff.jsonl")
    assert (code, err) == (0, "") and out.startswith(f"{escaped}\n  format      JSONL\n")
    code, out, err = show_bytes(directory + b"/empty-\xfe.jsonl", b"--json")
    assert code == 1 and err.startswith(f"mt-eval corpus show: corpus {tmp_path}/empty-\\udcfe.jsonl: has no entries;")
    assert "Traceback" not in err and err.count("\n") == 1
    assert json.loads(out) == {"file": f"{tmp_path}/empty-\\udcfe.jsonl", "readable": False, "refused": [
        {"message": "has no entries", "hint": 'add entries, one JSON object per line, e.g. {"id": "1", "source": '
                                               '"...", "reference": "..."}'}]}


def test_the_c_locale_without_utf8_mode_shows_accents_as_escapes_not_a_traceback(tmp_path: Path):
    """Under LC_ALL=C with PYTHONUTF8=0 standard output is ASCII (surrogateescape, which raises on "ó"): showing a
    corpus with an accent, or printing a translation, was a UnicodeEncodeError traceback."""
    corpus = tmp_path / "c.tsv"
    corpus.write_text("Hello.\tHola.\nBye.\tAdiós.\n", encoding="utf-8")
    environment = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0"}
    environment.pop("PYTHONIOENCODING", None)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "corpus", "show", str(corpus)], capture_output=True,
                          timeout=60, env=environment)
    assert (done.returncode, done.stderr) == (0, b""), done.stderr.decode(errors="replace")
    assert b'reference  "Adi\\xf3s."' in done.stdout, done.stdout
