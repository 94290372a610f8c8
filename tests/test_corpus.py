"""The corpus reader's rules beyond the fixture folder: where problems are, ids, headers, doubts (selections:
test_corpus_selection.py)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from mt_eval.corpus import CorpusError, CorpusSpec, load_corpus, read_corpus
from mt_eval.corpus.doubts import find_doubts
from mt_eval.corpus.scripts import expected_scripts

DEMO = Path(__file__).parent.parent / "examples" / "data" / "eng-spa-demo.json"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def refusal(path: Path, **options) -> CorpusError:
    with pytest.raises(CorpusError) as caught:
        read_corpus(path, **options)
    return caught.value


def test_upstream_shape_with_dataset_pair_and_licence():
    corpus = read_corpus(DEMO)
    assert (corpus.name, corpus.pair, corpus.license) == ("eng-spa-demo", "eng>spa", "CC0-1.0")
    assert len(corpus.entries) == 36 and corpus.has_references  # every scored entry has one
    assert sum(isinstance(e.get("reference"), str) for e in corpus.entries) == 33  # negative controls have none
    assert corpus.sha256 == hashlib.sha256(DEMO.read_bytes()).hexdigest()


def test_the_same_entries_from_json_jsonl_and_tsv(tmp_path: Path):
    entries = [{"id": "1", "source": "Hello there", "reference": "Hola"},
               {"id": "2", "source": "Bye now", "reference": "Adiós"}]
    as_list = read_corpus(write(tmp_path, "a.json", json.dumps(entries)))
    as_jsonl = read_corpus(write(tmp_path, "a.jsonl", "\n".join(json.dumps(e) for e in entries) + "\n\n"))
    with_header = read_corpus(write(tmp_path, "a.tsv", "id\tsource\treference\n1\tHello there\tHola\n"
                                                       "2\tBye now\tAdiós\n"))
    declared = read_corpus(write(tmp_path, "b.tsv", "1\tHello there\tHola\n2\tBye now\tAdiós\n"),
                           columns=["id", "source", "reference"])
    for corpus in (as_list, as_jsonl, with_header, declared):
        assert corpus.entries == entries


def test_a_crlf_files_last_line_without_its_lf_loses_its_cr_too(tmp_path: Path):
    """Before, the last reference (or source) kept a "\\r", which reached the method and the scorer."""
    tsv = read_corpus(write(tmp_path, "mixed.tsv", "Hello.\tHola.\r\nBye.\tAdiós.\nYes.\tSí.\r"))
    assert [e["reference"] for e in tsv.entries] == ["Hola.", "Adiós.", "Sí."]
    source = write(tmp_path, "src.eng", "Hello.\r\nBye.\r")
    assert [e["source"] for e in load_corpus(CorpusSpec(source_file=source)).entries] == ["Hello.", "Bye."]


def test_a_tsv_mixing_families_leaves_a_scored_rows_empty_family_pass_rule_and_pair_cells_out(tmp_path: Path):
    """Before, the empty cells were values: every scored row had "only a canary has a pass rule" and "only a
    negative control names its own pair", so a TSV corpus could not hold canaries or negative controls."""
    path = write(tmp_path, "mixed.tsv", "id\tsource\treference\tfamily\tpass_rule\tpair\n"
                                        "s1\tThe cat sleeps\tEl gato duerme\t\t\t\n"
                                        "c1\tYes\tSí\tcanary\texact\t\n"
                                        "n1\tDer Hund\t\tnegative\t\tdeu>spa\n"
                                        "s2\tThe dog runs\tEl perro corre\n")
    corpus = load_corpus(CorpusSpec(path))
    assert corpus.entries == [
        {"id": "s1", "source": "The cat sleeps", "reference": "El gato duerme"},
        {"id": "c1", "source": "Yes", "reference": "Sí", "family": "canary", "pass_rule": "exact"},
        {"id": "n1", "source": "Der Hund", "family": "negative", "pair": "deu>spa"},
        {"id": "s2", "source": "The dog runs", "reference": "El perro corre"}]


@pytest.mark.parametrize(("name", "content", "path", "message"), [
    ("dup.json", '[{"id": "a", "source": "x"}, {"id": "a", "source": "y"}]', "$[1].id",
     'duplicate id "a" (first at $[0])'),
    ("dup.jsonl", '{"id": "a", "source": "x"}\n\n{"id": "a", "source": "y"}\n', "line 3.id",
     'duplicate id "a" (first at line 1)'),
    ("dupquoted.json", r'[{"id": "a\"b\\c", "source": "x"}, {"id": "a\"b\\c", "source": "y"}]', "$[1].id",
     r'duplicate id "a\"b\\c" (first at $[0])'),
    ("nosource.json", '{"entries": [{"id": "a"}]}', "$.entries[0].source", "missing source text"),
    ("blank.tsv", "id\tsource\n7\t  \n", "line 2.source", "missing source text"),
    ("badsource.json", '[{"id": "a", "source": 3}]', "$[0].source", "source must be a string, got an integer"),
    ("someids.json", '[{"id": "a", "source": "x"}, {"source": "y"}]', "$[1].id", "every entry needs an id"),
    ("floatid.json", '[{"id": 1.5, "source": "x"}]', "$[0].id", "an id must be a string or an integer, got a number"),
    ("badref.json", '[{"id": "a", "source": "x", "reference": ["y"]}]', "$[0].reference",
     "reference must be a string, got a list"),
    ("shape.json", '{"items": []}', "$", 'expected a list of entries, or an object with an "entries" list'),
    ("syntax.json", '[{"id": "a",}]', "$", "invalid JSON at line 1, column 13"),
    ("lines.jsonl", '{"id": "a", "source": "x"}\n{"id": \n', "line 2", "invalid JSON at column 8"),
    ("entry.jsonl", '["a", "x"]\n', "line 1", "an entry must be an object, got a list"),
    ("cols.tsv", "id\tsource\n1\ta\tb\n", "line 2", "3 columns, but the header names 2"),
    ("twosources.tsv", "source\tSource\treference\nx\ty\tz\n", "$", "names two source columns"),
    ("twoaliases.tsv", "src\toriginal\ttgt\nx\ty\tz\n", "$", 'names two source columns: "src" (column 1) and '
                                                            '"original" (column 2)'),
    ("nosourcecol.tsv", "id\treference\n1\tx\n", "$", "names no source column"),
    ("surrogate.jsonl", '{"id": "1", "source": "Hi \\ud800 you"}\n', "line 1.source", "a lone surrogate (\\ud800)"),
    ("surrogate.json", '{"entries": [{"id": "a", "source": "x", "reference": "y\\udc00"}]}', "$.entries[0].reference",
     "a lone surrogate (\\udc00)"),
    ("references.json", '[{"id": "a", "source": "x", "references": ["y"]}]', "$[0].references",
     '"references" is not read: an entry is scored against its one "reference"'),
    ("pair.json", '{"language_pair": "english", "entries": [{"id": "a", "source": "x"}]}', "$.language_pair",
     '"english" is not a language pair'),
    ("pairkeys.json", '{"language_pair": {"src": "eng", "tgt": "spa"}, "entries": []}', "$.language_pair",
     "the language pair names no source and no target language"),
    ("dataset.json", '{"dataset": "flores", "entries": []}', "$.dataset", '"dataset" must be an object, got a string'),
    ("topkey.json", '{"langauge_pair": "eng>spa", "entries": []}', "$.langauge_pair", "not a key of the upstream"),
    ("gold.json", '{"gold_fields": ["pe"], "entries": []}', "$.gold_fields", 'is read only inside "dataset"'),
    ("goldkey.json", '{"dataset": {"gold_field": ["pe"]}, "entries": []}', "$.dataset.gold_field", "is not read"),
])
def test_bad_corpora_name_the_place_and_the_problem(tmp_path: Path, name, content, path, message):
    error = refusal(write(tmp_path, name, content))
    assert any(p.path == path and message in p.message for p in error.problems), error


HUGE = "9" * 5000  # (Python's int() reads 4,300 digits at most: json.loads raised ValueError, a traceback)


@pytest.mark.parametrize(("name", "content", "place"), [
    ("huge.jsonl", '{"id": "a", "source": "x"}\n{"id": "b", "source": "y", "n": HUGE}\n', "line 2.n"),
    ("huge-id.jsonl", '{"id": -HUGE, "source": "x"}\n', "line 1.id"),
    ("huge.json", '[{"id": "a", "source": "x", "meta": {"counts": [1, HUGE]}}]', "$[0].meta.counts[1]"),
    ("huge-upstream.json", '{"entries": [{"id": "a", "source": HUGE}]}', "$.entries[0].source"),
])
def test_an_integer_of_more_digits_than_python_reads_is_refused_at_its_place(tmp_path: Path, capsys, name, content,
                                                                             place):
    from mt_eval.cli import main

    corpus = write(tmp_path, name, content.replace("HUGE", HUGE))
    assert main(["corpus", "show", str(corpus)]) == 1
    assert capsys.readouterr().err == (f"mt-eval corpus show: corpus {corpus} {place}: holds an integer of 5,000 "
                                       "digits, more than can be read (4,300 at most); write it as a string, in "
                                       "double quotes, or remove it\n")


def test_a_file_misnamed_for_what_it_holds_is_named_so_with_a_long_integer_in_it(tmp_path: Path):
    lines = '{"id": "a", "source": "x"}\n{"id": "b", "source": "y", "n": HUGE}\n'.replace("HUGE", HUGE)
    assert str(refusal(write(tmp_path, "lines.json", lines))).endswith("it holds JSON lines (one object per line): "
                                                                         "name it lines.jsonl")
    listed = '[\n{"id": "a", "source": "x", "n": HUGE},\n{"id": "b", "source": "y"}\n]\n'.replace("HUGE", HUGE)
    assert str(refusal(write(tmp_path, "listed.jsonl", listed))) == (
        f"corpus {tmp_path / 'listed.jsonl'}: holds one JSON list over several lines, not one JSON object per line; "
        "name it listed.json")


def test_every_entry_problem_is_reported_at_once(tmp_path: Path):
    many = '[{"id": "a"}, {"id": "a", "source": "x"}, {"id": "", "source": "y"}]'
    error = refusal(write(tmp_path, "many.json", many))
    assert [p.path for p in error.problems] == ["$[0].source", "$[1].id", "$[2].id"]


def test_a_single_problem_is_one_line_naming_the_file_and_the_fix(tmp_path: Path):
    empty = write(tmp_path, "dev.jsonl", "\n\n")
    message = str(refusal(empty))
    assert "\n" not in message
    assert message.startswith(f"corpus {empty}: has no entries; add entries, one JSON object per line")


def test_bad_encoding_missing_file_directory_and_bad_gzip(tmp_path: Path):
    assert "not valid UTF-8: byte 0xe9 at line 2" in str(refusal(write(tmp_path, "latin.tsv", b"hello\n2\tcaf\xe9\n")))
    assert "cannot read corpus" in str(refusal(tmp_path / "absent.json"))
    (tmp_path / "folder.json").mkdir()
    assert "is a directory" in str(refusal(tmp_path / "folder.json"))
    assert "is not a valid gzip file" in str(refusal(write(tmp_path, "plain.tsv.gz", "Hello\tHola\n")))


@pytest.mark.parametrize(("name", "hint"), [
    ("dev.csv", "CSV quoting differs between programs"),
    ("dev.txt", "--source-file FILE"),
    ("newstest.de", "--source-file FILE"),
    ("devtest.eng_Latn", "--source-file FILE"),
    ("dev.xlsx", ".xlsx is not a corpus format"),
    ("newstest2019-src.de.sgm", "holds its segments inside markup, which mt-eval does not read: extract"),
    ("generaltest2022.en-de.xml", "holds its segments inside markup"),
    ("memory.tmx", "holds its segments inside markup"),
])
def test_unsupported_formats_are_refused_with_what_to_do(tmp_path: Path, name: str, hint: str):
    error = refusal(write(tmp_path, name, "Hello\tHola\n"))
    assert "unsupported format: use .json, .jsonl or .tsv" in str(error) and hint in str(error)


def test_nul_bytes_are_refused_as_utf16_without_its_mark_with_the_line_to_convert_it(tmp_path: Path):
    for name, data, encoding in [("a.tsv", "Hi\tHola\n".encode("utf-16-le"), "utf-16le"),
                                 ("b.tsv", "café\tcafé\n".encode("utf-16-le"), "utf-16le"),
                                 ("c.jsonl", '{"id": "1", "source": "é"}\n'.encode("utf-16-be"), "utf-16be")]:
        message = str(refusal(write(tmp_path, name, data)))
        assert "holds NUL bytes (the first at line 1), which no text has: it looks like UTF-16 without its " \
               "byte-order mark; convert it to UTF-8, e.g. iconv -f " + encoding + " -t utf-8 " + name in message
    zipped = str(refusal(write(tmp_path, "e.tsv.gz", gzip.compress("Hi\n".encode("utf-16-le")))))
    assert "zcat e.tsv.gz | iconv -f utf-16le -t utf-8 > e.utf8.tsv" in zipped


def test_a_surrogate_pair_and_nan_still_read_where_a_lone_surrogate_is_refused(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "p.json", '[{"id": "1", "source": "Smile \\ud83d\\ude00", "score": NaN}]'))
    assert corpus.entries[0]["source"] == "Smile \U0001f600"
    error = refusal(write(tmp_path, "k.jsonl", '{"id": "1", "source": "x", "m": {"\\ud800": ["a"]}}\n'))
    assert error.problems[0].path == 'line 1.m["\\ud800"]' and "write the character itself" in str(error)


@pytest.mark.parametrize(("content", "field", "meant"), [
    ('[{"id": 1, "source": "Hello", "refrence": "Hola"}]', '"refrence" (first at $[0])', "reference"),
    ('[{"id": 1, "source": "Hello"}, {"id": 2, "source": "Bye", "Reference": "Adiós"}]', '"Reference" (first at $[1])',
     "reference"),
    ('[{"id": 1, "source": "Hello", "reference": "Hola", "familly": "canary"}]', '"familly"', "family"),
    ("id\tsource\trefrence\n1\tHello\tHola\n", '"refrence" (column 3 of the header on line 1)', "reference"),
])
def test_a_field_named_one_slip_from_a_known_one_is_a_doubt(tmp_path: Path, content: str, field: str, meant: str):
    path = write(tmp_path, "c.tsv" if "\t" in content else "c.json", content)
    error = str(refusal(path))
    assert field in error and f'did you mean "{meant}"?' in error and "--accept-doubt misspelled-field" in error
    corpus = read_corpus(path, accept=["misspelled-field"])
    assert corpus.accepted_doubts == ["misspelled-field"] and any(field.split('"')[1] in e for e in corpus.entries)


def test_names_of_their_own_are_not_taken_for_slips(tmp_path: Path):
    fields = ["translator", "source_lang", "ids", "sentence", "origin", "segment", "pass_rule", "sourceid"]
    corpus = read_corpus(write(tmp_path, "c.json", json.dumps([{"id": "1", "source": "Hi", **dict.fromkeys(fields)}])))
    assert corpus.warnings == []
    header = "id\tsorce\treference\n1\tx\ty\n"
    assert 'did you mean "source"? (column 2 is "sorce")' in str(refusal(write(tmp_path, "h.tsv", header)))
    capital = write(tmp_path, "s.json", '[{"Source": "x"}]')
    assert 'the entry has "Source": did you mean "source"?' in str(refusal(capital))


def test_upstream_json_reads_a_pair_written_as_text_and_warns_of_keys_it_ignores(tmp_path: Path):
    entries = [{"id": "1", "source": "Hello there", "reference": "Hola"}]
    corpus = read_corpus(write(tmp_path, "u.json", json.dumps({"language_pair": "en:es", "version": 2,
                                                               "entries": entries})))
    assert corpus.pair == "en>es" and corpus.warnings == [
        'the top-level key "version" is not read (the upstream shape reads "entries", "dataset" and "language_pair"): '
        "ignored"]


@pytest.mark.parametrize(("content", "code", "said", "entries_if_accepted"), [
    ('[\n  {\n    "id": "1",\n    "source": "Hi"\n  }\n]\n', "json-in-tsv", "looks like JSON (a list of entries)", 6),
    ('[\n\t{\n\t\t"id": "1",\n\t\t"source": "Hi"\n\t}\n]\n', "json-in-tsv", "looks like JSON", None),  # (TABs)
    ('# made by hand\n{"id": "1", "source": "Hi"}\n', "json-in-tsv", "line 2 looks like JSON", 1),
    ('"id";"source";"reference"\n"1";"Hi";"Hola"\n', "csv-in-tsv", "looks like a CSV header", 2),
    ("Source\tRefrence\nHi\tHola\n", "header-like-first-line", 'did you mean "reference"?', 2),
    ("source\tdomain\nHi\tnews\n", "header-like-first-line", '"domain" is none of them', 2),
])
def test_a_tsv_whose_first_line_is_another_format_or_an_unread_header_is_a_doubt(tmp_path: Path, content, code, said,
                                                                                  entries_if_accepted):
    path = write(tmp_path, "c.tsv", content)
    error = str(refusal(path))
    assert said in error and f"--accept-doubt {code}" in error
    if entries_if_accepted is None:  # read as TSV, it is refused, but for what it is not: "3 columns, but …"
        assert "--accept-doubt" not in str(refusal(path, accept=[code]))
    else:
        corpus = read_corpus(path, accept=[code])
        assert corpus.accepted_doubts == [code] and len(corpus.entries) == entries_if_accepted


def test_integer_ids_are_accepted_and_remembered_as_given(tmp_path: Path):
    entries = [{"id": 7, "source": "Hi there", "domain": "chat", "context": {"previous": "Yo"}},
               {"id": "x", "source": "Ok"}]
    corpus = read_corpus(write(tmp_path, "c.json", json.dumps(entries)))
    assert corpus.entries[0] == {"id": "7", "source": "Hi there", "domain": "chat", "context": {"previous": "Yo"}}
    assert corpus.given_ids == {"7": 7} and corpus.given_id("7") == 7 and corpus.given_id("x") == "x"
    assert not corpus.has_references


def test_ids_are_unique_by_their_text(tmp_path: Path):
    error = refusal(write(tmp_path, "c.jsonl", '{"id": 7, "source": "a b"}\n{"id": "7", "source": "c d"}\n'))
    assert 'duplicate id "7" (first at line 1)' in str(error)


def test_a_row_whose_columns_are_separated_by_spaces_gets_a_hint_about_tabs(tmp_path: Path):
    error = refusal(write(tmp_path, "mixed.tsv", "Hello there.\tHola.\nGood night.    Buenas noches.\nBye.\tAdiós.\n"))
    assert "1 entry of 3 has no reference (line 2)" in str(error)
    assert "line 2 seems to separate its columns with spaces: TSV columns are separated by one TAB" in str(error)


def test_two_spaces_after_a_full_stop_are_not_taken_for_a_column_separator(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "typed.tsv", "It rained.  We stayed in.\nIt was late.  We slept.\n"))
    assert [e["source"] for e in corpus.entries] == ["It rained.  We stayed in.", "It was late.  We slept."]
    error = refusal(write(tmp_path, "columns.tsv", "Good evening  Buenas tardes\nSee you  Nos vemos\n"))
    assert "--accept-doubt spaces-not-tabs" in str(error)


def test_a_text_row_is_not_taken_for_a_header(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "h.tsv", "Source\tFuente\nTarget practice\tPráctica de tiro\n"))
    assert corpus.header_line is None and corpus.entries[0] == {"id": "1", "source": "Source", "reference": "Fuente"}
    single = read_corpus(write(tmp_path, "s.tsv", "source\nHello there.\n"))
    assert read_corpus(write(tmp_path, "b.tsv", "[Applause]\t[Aplausos]\n")).entries[0]["source"] == "[Applause]"
    assert single.header_line == 1 and single.entries == [{"id": "2", "source": "Hello there."}]


def test_a_canonical_header_column_wins_over_an_alias_which_stays_an_extra_field(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "h.tsv", "source\ttranslation\treference\nHi there\tmachine\tHola\n"))
    assert corpus.entries == [{"id": "2", "source": "Hi there", "translation": "machine", "reference": "Hola"}]
    assert corpus.aliases == {}


def test_tsv_whitespace_rows_are_skipped_and_a_hash_with_a_tab_is_text(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "w.tsv", "Hi there\tHola\n \t \n\n#\tnumber sign\nBye now\tAdiós\n"))
    assert [e["id"] for e in corpus.entries] == ["1", "4", "5"] and corpus.entries[1]["source"] == "#"


def test_jsonl_keeps_line_separators_inside_texts_and_reads_crlf(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "u.jsonl", '{"id": "1", "source": "a\u2028b\u0085c d"}\r\n'
                                                    '{"id": "2", "source": "e f"}\r\n'))
    assert [e["source"] for e in corpus.entries] == ["a\u2028b\u0085c d", "e f"] and corpus.lines == [1, 2]


def test_a_utf16_spreadsheet_export_is_read(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "sheet.tsv", "source\treference\r\nHello there\tHola\r\n".encode("utf-16")))
    assert corpus.entries == [{"id": "2", "source": "Hello there", "reference": "Hola"}]


def test_a_gzip_corpus_hashes_the_file_as_shipped(tmp_path: Path):
    raw = gzip.compress(b'{"id": "1", "source": "Hello there", "reference": "Hola"}\n')
    path = write(tmp_path, "dev.jsonl.gz", raw)
    corpus = read_corpus(path)
    assert corpus.sha256 == hashlib.sha256(raw).hexdigest() and corpus.name == "dev"


def test_parallel_text_counts_bom_crlf_and_the_combined_hash(tmp_path: Path):
    source = write(tmp_path, "dev.en", "\ufeffOne two.\r\nThree four.\r\n")
    reference = write(tmp_path, "dev.es", "Uno dos.\nTres cuatro.")
    corpus = load_corpus(CorpusSpec(source_file=source, reference_file=reference))
    assert corpus.entries == [{"id": "1", "source": "One two.", "reference": "Uno dos."},
                              {"id": "2", "source": "Three four.", "reference": "Tres cuatro."}]
    own = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (source, reference)]
    assert corpus.sha256 == hashlib.sha256(f"{own[0]}\n{own[1]}\n".encode()).hexdigest()
    assert [f.sha256 for f in corpus.files] == own


def test_parallel_text_mismatch_names_both_counts_and_a_trailing_empty_line(tmp_path: Path):
    source = write(tmp_path, "dev.en", "One.\nTwo.\n")
    reference = write(tmp_path, "dev.es", "Uno.\nDos.\n\n")
    with pytest.raises(CorpusError) as caught:
        load_corpus(CorpusSpec(source_file=source, reference_file=reference))
    assert f"has 2 lines but {reference} has 3 (the reference file ends with an empty line)" in str(caught.value)
    with pytest.raises(CorpusError, match="has only empty lines"):
        load_corpus(CorpusSpec(source_file=write(tmp_path, "blank.en", "\n\n")))


def test_a_tsv_given_as_parallel_text_is_refused(tmp_path: Path):
    source = write(tmp_path, "dev.tsv", "Hello there.\tHola.\nGood night.\tBuenas noches.\n")
    with pytest.raises(CorpusError, match="--accept-doubt tabs-in-parallel-text") as caught:
        read_corpus(CorpusSpec(source_file=source))
    assert "give a TSV corpus with --corpus dev.tsv" in str(caught.value)


def test_spec_refuses_mixed_or_incomplete_flags(tmp_path: Path):
    with pytest.raises(ValueError, match="not both"):
        CorpusSpec(path=tmp_path / "a.tsv", source_file=tmp_path / "b.en")
    with pytest.raises(ValueError, match="--reference-file needs --source-file"):
        CorpusSpec(path=tmp_path / "a.tsv", reference_file=tmp_path / "b.es")
    with pytest.raises(ValueError, match=r"--columns names the columns of a \.tsv corpus"):
        CorpusSpec(path=tmp_path / "a.jsonl", columns=["source"])


def test_a_partial_share_of_identical_references_is_a_loud_warning(tmp_path: Path):
    rows = "".join(f"Berlin {i}\tBerlin {i}\n" for i in range(3)) + "".join(f"Good day {i}\tBuen día {i}\n"
                                                                        for i in range(7))
    corpus = read_corpus(write(tmp_path, "w.tsv", rows))
    assert corpus.warnings == ["3 of 10 references (30%) are identical to their source; scores will count these "
                               "as perfect copies"]


def test_an_accepted_doubt_becomes_a_recorded_warning(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "i.tsv", "Same text.\tSame text.\nOther text.\tOther text.\n"),
                         accept=["reference-equals-source"])
    assert corpus.accepted_doubts == ["reference-equals-source"]
    assert "accepted with --accept-doubt reference-equals-source" in corpus.warnings[0]


def test_script_doubts_need_a_pair_and_a_known_script(tmp_path: Path):
    path = write(tmp_path, "s.tsv", "Привет, как дела у тебя?\tHallo, wie geht es dir?\n"
                                    "Сегодня очень холодно.\tHeute ist es sehr kalt.\n")
    assert find_doubts(load_corpus(CorpusSpec(path=path))) == []
    assert find_doubts(load_corpus(CorpusSpec(path=path)), "rus>deu") == []
    assert find_doubts(load_corpus(CorpusSpec(path=path)), "xyz>deu") == []
    error = refusal(path, pair="eng>deu")
    assert "the sources are in Cyrillic script, but eng is written in Latin" in str(error)
    assert "look swapped" not in str(error) and "--pair" in str(error)
    flores = refusal(path, pair="eng_Latn>deu_Latn")
    assert "Cyrillic" in str(flores)


def test_expected_scripts_from_codes_and_subtags():
    assert expected_scripts("spa") == {"Latin"} and expected_scripts("es-MX") == {"Latin"}
    assert expected_scripts("sr-Cyrl") == {"Cyrillic"} and expected_scripts("srp") == set()
    assert expected_scripts("ja") == {"Han", "Kana"} and expected_scripts("zh-Hant") == {"Han"}
    assert expected_scripts("kor") == {"Hangul", "Han"} and expected_scripts("eng_Latn") == {"Latin"}


def test_a_constant_source_column_is_refused_with_how_to_name_the_columns(tmp_path: Path):
    error = refusal(write(tmp_path, "j.jsonl", "".join(json.dumps({"id": str(i), "source": "x", "reference": str(i)})
                                                      + "\n" for i in range(3))))
    assert "every one of the 3 entries has the source 'x'" in str(error)
    assert "--accept-doubt same-source-everywhere" in str(error)
