"""A key written twice in one object of a JSON or JSONL corpus is refused with where it is: JSON readers keep only the
last value, so the run was scored against a reference the file also contradicts (`mt_eval.corpus.duplicate_keys`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.corpus.model import CorpusError
from mt_eval.corpus.reader import read_corpus

HINT = "keep one of them; JSON readers silently drop all but the last"


def test_a_jsonl_line_that_writes_a_key_twice_is_refused_with_its_line(tmp_path: Path):
    corpus = tmp_path / "dup.jsonl"
    corpus.write_text('{"id": "1", "source": "Hello.", "reference": "Hola."}\n'
                      '{"id": "2", "source": "Bye.", "reference": "Adiós.", "reference": "Chao."}\n'
                      '{"id": "3", "source" : "Yes.", "source":"Si.", "reference": "Sí."}\n', encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        read_corpus(corpus)
    assert [(p.path, p.message, p.hint) for p in refused.value.problems] == [
        ("line 2", 'key "reference" appears more than once in an object', HINT),
        ("line 3", 'key "source" appears more than once in an object', HINT)]


@pytest.mark.parametrize("shape", ["list", "upstream"])
def test_a_json_corpus_that_writes_a_key_twice_is_refused(tmp_path: Path, shape: str):
    entry = '{"id": "1", "source": "Hello.", "reference": "Hola.", "reference": "Adiós."}'
    text = f"[{entry}]" if shape == "list" else (
        '{"dataset": {"name": "d", "license": "CC0-1.0"}, "language_pair": {"source": "eng", "target": "spa"}, '
        f'"entries": [{entry}]}}')
    corpus = tmp_path / "dup.json"
    corpus.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        read_corpus(corpus)
    assert [(p.path, p.message) for p in refused.value.problems] == [
        ("$", 'key "reference" appears more than once in an object')]


def test_texts_and_nested_objects_that_look_like_keys_are_read_as_they_are(tmp_path: Path):
    """A text holding ``":`` and an object inside an entry make the file write more ``":`` than its entries hold
    keys: it is read again to be sure, and read as it is."""
    entries = [{"id": "1", "source": 'He said "stop": then left.', "reference": 'Dijo "para": y se fue.',
                "meta": {"domain": "news", "year": 2020}},
               {"id": "2", "source": 'key": value', "reference": "x"}]
    corpus = tmp_path / "fine.jsonl"
    corpus.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")
    assert [e["source"] for e in read_corpus(corpus).entries] == [entries[0]["source"], entries[1]["source"]]
    listed = tmp_path / "fine.json"
    listed.write_text(json.dumps(entries, indent=2, ensure_ascii=False), encoding="utf-8")
    assert len(read_corpus(listed).entries) == 2
