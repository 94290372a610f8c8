"""Corpus files that would be misread, refused with what to do: a language-code column read as the source, a
carriage return alone inside a line, JSON lines in a .json file and one JSON value in a .jsonl file, markup (a WMT
SGML or XML test set, TMX) read line by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.cli import main
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


WMT_SGML = ('<srcset setid="newstest2019" srclang="de">\n<doc sysid="ref" docid="abc-1" origlang="de">\n<p>\n'
            '<seg id="1">Guten Morgen &amp; willkommen.</seg>\n</p>\n</doc>\n</srcset>\n')
WMT_XML = ('<?xml version="1.0" encoding="utf-8"?>\n<dataset id="generaltest2022">\n<collection id="general">\n'
           '<doc id="d1" origlang="en"><src lang="en"><p><seg id="1">Hello &amp; welcome.</seg></p></src></doc>\n'
           '</collection>\n</dataset>\n')
TMX = '\ufeff<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>Hi.</seg></tuv></tu></body></tmx>\n'


@pytest.mark.parametrize(("args", "said"), [
    (["--source-file", "newstest2019-src.de.sgm"], "line 1 of newstest2019-src.de.sgm opens a WMT SGML test set"),
    (["--source-file", "src.de", "--reference-file", "ref.xml"], "line 1 of ref.xml opens an SGML or XML document"),
    (["--source-file", "memory.tmx"], "line 1 of memory.tmx opens a TMX translation memory"),
    (["newstest2019"], "line 1 opens a WMT SGML test set"),
    (["generaltest2022"], "line 1 opens an SGML or XML document"),
    (["tm.tsv"], "line 1 opens a TMX translation memory"),
])
def test_markup_read_as_lines_of_text_is_refused_with_how_to_extract_it(tmp_path: Path, monkeypatch, capsys,
                                                                        args: list[str], said: str):
    """Before: each line of the markup, tags and all, was a source to translate (or a reference to score
    against), exit 0; `--corpus x.sgm` even said to give the file with --source-file."""
    monkeypatch.chdir(tmp_path)
    for name, text in [("newstest2019-src.de.sgm", WMT_SGML), ("newstest2019", WMT_SGML), ("memory.tmx", TMX),
                       ("generaltest2022", WMT_XML), ("tm.tsv", TMX), ("src.de", "Hallo.\nWillkommen.\n" * 3),
                       ("ref.xml", WMT_XML)]:
        write(tmp_path, name, text)
    assert main(["corpus", "show", *args]) == 1
    out = capsys.readouterr()
    assert said in out.out + out.err
    assert "its segments are inside markup" in out.out + out.err
    assert "--echo src > src.de" in out.out + out.err and "--accept-doubt markup-not-text" in out.out + out.err
    corpus = args if args[0].startswith("--") else ["--corpus", *args]
    assert main(["run", "--method", str(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"), *corpus,
                 "--pair", "eng>spa", "--out", str(tmp_path / "run")]) == 1
    assert said in capsys.readouterr().err and not (tmp_path / "run").exists()
    assert main(["corpus", "show", *args, "--accept-doubt", "markup-not-text"]) == 0
    assert "(accepted with --accept-doubt markup-not-text)" in capsys.readouterr().out


def test_text_that_mentions_a_tag_is_not_taken_for_markup(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "t.tsv", "<b>Bold</b> text.\t<b>Negrita</b>.\n<tmx> is a format.\tTMX.\n"))
    assert corpus.entries[0]["source"] == "<b>Bold</b> text."


def test_translate_refuses_markup_given_as_text_with_how_to_extract_it(tmp_path: Path, capsys):
    """`mt-eval translate --file` reads text as run's --source-file does: a WMT SGML test set is not translated
    line by line, tags and all."""
    plugin = str(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa")
    sgml = str(Path(__file__).parent / "fixtures" / "corpora" / "wmt-sgml.sgm")
    assert main(["translate", plugin, "--file", sgml]) == 2
    said = capsys.readouterr()
    assert said.out == "" and "opens a WMT SGML test set" in said.err
    assert "give that file with --file; if the file is really meant this way, add --accept-doubt markup-not-text" \
        in said.err
    assert main(["translate", plugin, "--file", sgml, "--accept-doubt", "markup-not-text"]) == 0
    assert "<srcset" in capsys.readouterr().out


JSON_LINES = ('{"id": "1", "source": "Hello.", "reference": "Hola."}\n'
              '{"id": "2", "source": "Bye.", "reference": "Adiós."}\n')


@pytest.mark.parametrize(("args", "said", "fix"), [
    (["--source-file", "dev.jsonl"], "line 1 of dev.jsonl is an entry object, as in JSON lines",
     "give it as a corpus with --corpus dev.jsonl;"),
    (["--source-file", "dev.txt"], "line 1 of dev.txt is an entry object", "--corpus dev.jsonl (renamed)"),
    (["--source-file", "src.en", "--reference-file", "dev.jsonl"], "each line would be one reference text",
     "--corpus dev.jsonl;"),
    (["--source-file", "dev.json"], "line 2 of dev.json opens a JSON document", "--corpus dev.json;"),
])
def test_json_given_as_parallel_text_is_refused_with_how_to_give_it(tmp_path: Path, monkeypatch, capsys,
                                                                    args: list[str], said: str, fix: str):
    """Before: each JSON line, braces and all, was a source to translate (or a reference), exit 0."""
    monkeypatch.chdir(tmp_path)
    for name, text in [("dev.jsonl", JSON_LINES), ("dev.txt", JSON_LINES), ("src.en", "Hello.\nBye.\n"),
                       ("dev.json", '\n[\n  {"id": "1", "source": "Hello."}\n]\n')]:
        write(tmp_path, name, text)
    assert main(["corpus", "show", *args]) == 1
    out = capsys.readouterr().out
    assert said in out and fix in out and "--accept-doubt json-in-parallel-text" in out
    assert main(["run", "--method", str(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"), *args,
                 "--pair", "eng>spa", "--out", str(tmp_path / "run")]) == 1
    assert said in capsys.readouterr().err and not (tmp_path / "run").exists()
    assert main(["corpus", "show", *args, "--accept-doubt", "json-in-parallel-text"]) == 0
    assert "(accepted with --accept-doubt json-in-parallel-text)" in capsys.readouterr().out


def test_sentences_in_brackets_are_not_taken_for_json(tmp_path: Path):
    from mt_eval.corpus.parallel import read_parallel

    corpus = read_parallel(write(tmp_path, "src.en", "[laughs] Hello.\n{sic} Bye.\n[1, 2]\n"))
    assert [d.code for d in find_doubts(corpus)] == []


def test_translate_refuses_json_lines_given_as_text_with_how_to_give_them(tmp_path: Path, capsys):
    """`mt-eval translate --file dev.txt` holding JSON lines translated each line, braces and all."""
    plugin = str(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa")
    text = str(write(tmp_path, "dev.txt", JSON_LINES))
    assert main(["translate", plugin, "--file", text]) == 2
    said = capsys.readouterr()
    assert said.out == "" and "line 1 of dev.txt is an entry object, as in JSON lines" in said.err
    assert "translate a corpus of JSON lines with --file dev.jsonl (renamed; .json for one JSON document); if the " \
        "file is really meant this way, add --accept-doubt json-in-parallel-text" in said.err
    assert main(["translate", plugin, "--file", text, "--accept-doubt", "json-in-parallel-text"]) == 0
    assert capsys.readouterr().out.startswith('{"id": "1"')
