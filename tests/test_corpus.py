"""Corpora in every supported shape, and clear errors for bad ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.harness.corpus import CorpusError, read_corpus

DEMO = Path(__file__).parent.parent / "examples" / "data" / "eng-spa-demo.json"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def test_upstream_shape_with_dataset_pair_and_licence():
    corpus = read_corpus(DEMO)
    assert (corpus.name, corpus.pair, corpus.license) == ("eng-spa-demo", "eng>spa", "CC0-1.0")
    assert len(corpus.entries) == 36 and not corpus.has_references  # its negative controls have none
    assert sum(isinstance(e.get("reference"), str) for e in corpus.entries) == 33
    assert len(corpus.sha256) == 64


def test_flat_list_jsonl_and_tsv_read_the_same_entries(tmp_path: Path):
    entries = [{"id": "1", "source": "Hello", "reference": "Hola"}, {"id": "2", "source": "Bye", "reference": "Adiós"}]
    as_list = read_corpus(write(tmp_path, "a.json", json.dumps(entries)))
    as_jsonl = read_corpus(write(tmp_path, "a.jsonl", "\n".join(json.dumps(e) for e in entries) + "\n\n"))
    with_header = read_corpus(write(tmp_path, "a.tsv", "id\tsource\treference\n1\tHello\tHola\n2\tBye\tAdiós\n"))
    without_header = read_corpus(write(tmp_path, "b.tsv", "1\tHello\tHola\n2\tBye\tAdiós\n"))
    for corpus in (as_list, as_jsonl, with_header, without_header):
        assert corpus.entries == entries
        assert corpus.pair is None


def test_extra_fields_are_kept_and_integer_ids_become_strings(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "c.json", json.dumps(
        [{"id": 7, "source": "Hi", "domain": "chat", "context": {"previous": "Yo"}}])))
    assert corpus.entries == [{"id": "7", "source": "Hi", "domain": "chat", "context": {"previous": "Yo"}}]
    assert not corpus.has_references


@pytest.mark.parametrize(("name", "content", "path", "message"), [
    ("dup.json", '[{"id": "a", "source": "x"}, {"id": "a", "source": "y"}]', "$.entries[1].id",
     'duplicate id "a" (first at $.entries[0])'),
    ("nosource.json", '[{"id": "a"}]', "$.entries[0].source", "missing source text"),
    ("badsource.json", '[{"id": "a", "source": 3}]', "$.entries[0].source", "source must be a string, got int"),
    ("noid.json", '[{"source": "x"}]', "$.entries[0].id", "every entry needs an id"),
    ("badref.json", '[{"id": "a", "source": "x", "reference": ["y"]}]', "$.entries[0].reference",
     "reference must be a string, got list"),
    ("shape.json", '{"items": []}', "$", 'expected a list of entries, or an object with an "entries" list'),
    ("syntax.json", '[{"id": "a",}]', "$", "invalid JSON at line 1, column 13"),
    ("lines.jsonl", '{"id": "a", "source": "x"}\n{"id": \n', "line 2", "invalid JSON at column 8"),
    ("cols.tsv", "id\tsource\n1\ta\tb\n", "line 2", "3 columns, but the header has 2"),
])
def test_bad_corpora_name_the_place_and_the_problem(tmp_path: Path, name, content, path, message):
    with pytest.raises(CorpusError) as caught:
        read_corpus(write(tmp_path, name, content))
    assert any(p.path == path and message in p.message for p in caught.value.problems), caught.value


def test_every_entry_problem_is_reported_at_once(tmp_path: Path):
    with pytest.raises(CorpusError) as caught:
        read_corpus(write(tmp_path, "many.json", '[{"id": "a"}, {"id": "a", "source": "x"}, {"source": "y"}]'))
    assert [p.path for p in caught.value.problems] == ["$.entries[0].source", "$.entries[1].id", "$.entries[2].id"]


def test_bad_encoding_and_missing_file(tmp_path: Path):
    with pytest.raises(CorpusError, match="not valid UTF-8: byte 0xe9 at line 2"):
        read_corpus(write(tmp_path, "latin.tsv", b"1\thello\n2\tcaf\xe9\n"))
    with pytest.raises(CorpusError, match="cannot read corpus"):
        read_corpus(tmp_path / "absent.json")
