"""Corpus files that would be misread, refused with what to do: a language-code column read as the source, a
carriage return alone inside a line, JSON lines in a .json file and one JSON value in a .jsonl file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.corpus import CorpusError, CorpusSpec, load_corpus, read_corpus
from mt_eval.corpus.doubts import find_doubts
from test_corpus import refusal, write


@pytest.mark.parametrize(("lines", "codes"), [
    (["en\tHello there.\tHola.", "en\tGood night.\tBuenas noches.", "es\tHola.\tHello."], "'en', 'es'"),
    ([f"{'pt-BR' if i % 3 else 'eng'}\tSentence {i}.\tFrase {i}." for i in range(40)], "'eng', 'pt-BR'"),
])
def test_a_language_code_column_read_as_the_source_is_refused(tmp_path: Path, lines: list[str], codes: str):
    """Before: only one code everywhere was refused; two codes ran, scoring "en" against the source sentence
    and handing the method the real references as an extra field."""
    error = refusal(write(tmp_path, "c.tsv", "\n".join(lines) + "\n"))
    assert f"the sources (column 1) are only {codes}: language codes, not the text to translate" in str(error)
    assert "--accept-doubt codes-not-sentences" in str(error)


@pytest.mark.parametrize("sources", [["cat", "dog", "sun", "sky"], ["en", "es", "fr", "de", "it"],
                                     ["yes", "no", "yes", "no", "ok"] * 2])
def test_a_glossary_of_short_words_is_no_code_column(tmp_path: Path, sources: list[str]):
    path = write(tmp_path, "g.tsv", "".join(f"{s}\tx{i}\n" for i, s in enumerate(sources)))
    assert "codes-not-sentences" not in {d.code for d in find_doubts(read_corpus(path))}


@pytest.mark.parametrize(("name", "content"), [("a.tsv", b"Hello.\r\nA\rC\nBye.\n"),
                                               ("b.tsv", "Hello.\tHola.\r\nA\tB\rC\tD\nBye.\tAdiós.\n".encode())])
def test_a_carriage_return_alone_inside_a_line_is_refused_naming_it(tmp_path: Path, name: str, content: bytes):
    """Before: kept as text ("A\\rC", two lines read as one entry), or refused as a TAB in a text."""
    error = refusal(write(tmp_path, name, content))
    assert "line 2 holds a carriage return (CR) that does not end it" in str(error)
    assert "tr -d" in str(error)


def test_a_carriage_return_alone_in_parallel_text_is_refused_and_crlf_and_cr_files_are_read(tmp_path: Path):
    source = write(tmp_path, "src.txt", b"One.\nTw\ro.\n")
    with pytest.raises(CorpusError, match="line 2 holds a carriage return"):
        load_corpus(CorpusSpec(source_file=source))
    assert len(read_corpus(write(tmp_path, "crlf.tsv", b"a\tx\r\nb\ty\r\nc\tz")).entries) == 3
    assert len(read_corpus(write(tmp_path, "mac.tsv", b"a\tx\rb\ty\rc\tz\r")).entries) == 3


def test_json_lines_in_a_json_file_and_a_json_list_in_a_jsonl_file_are_told_to_rename(tmp_path: Path):
    """Before: a bare "Extra data" at line 2, or one "Expecting value" per line of a pretty-printed list."""
    rows = [{"source": "a", "reference": "b"}, {"source": "c", "reference": "d"}]
    error = refusal(write(tmp_path, "l.json", "".join(json.dumps(r) + "\n" for r in rows)))
    assert "Extra data; it holds JSON lines (one object per line): name it l.jsonl" in str(error)
    error = refusal(write(tmp_path, "p.jsonl", json.dumps(rows, indent=2) + "\n"))
    assert "holds one JSON list over several lines, not one JSON object per line; name it p.json" in str(error)
    error = refusal(write(tmp_path, "broken.json", '{"entries": [\n'))
    assert "name it" not in str(error)


@pytest.mark.parametrize(("content", "columns", "says", "fix"), [
    ("1\tHello.\tHola.\n2\tBye.\tAdiós.\n", ["id", "source"], "every row has 3 columns, but --columns names 2",
     "name all 3 columns, in order: --columns id,source,column3"),
    ("id\tsource\n1\tHello.\tHola.\n2\tBye.\tAdiós.\n", None, "every row has 3 columns, but the header names 2",
     "name all 3 columns in the header (line 1)"),
])
def test_columns_named_short_of_every_row_are_told_once_to_name_them_all(tmp_path: Path, content: str,
                                                                        columns: list[str] | None, says: str, fix: str):
    """Before: one problem per row (twenty, then "also lines …"), each blaming a TAB inside a text."""
    error = refusal(write(tmp_path, "c.tsv", content), columns=columns)
    [problem] = error.problems
    assert (problem.path, problem.message, problem.hint) == ("$", says, fix)
