"""A key written twice in one object of a JSON or JSONL corpus is refused with where it is: JSON readers keep only the
last value, so the run was scored against a reference the file also contradicts (`mt_eval.corpus.duplicate_keys`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.corpus.model import CorpusError
from mt_eval.corpus.reader import read_corpus

HINT = "keep one of them; JSON readers silently drop all but the last"


def test_a_jsonl_line_that_writes_a_key_twice_is_refused_with_its_line_and_the_object_inside_it(tmp_path: Path):
    """An object nested in an entry was said as its line alone, as if the entry wrote the key twice."""
    corpus = tmp_path / "dup.jsonl"
    corpus.write_text('{"id": "1", "source": "Hello.", "reference": "Hola."}\n'
                      '{"id": "2", "source": "Bye.", "reference": "Adiós.", "reference": "Chao."}\n'
                      '{"id": "3", "source" : "Yes.", "source":"Si.", "reference": "Sí."}\n'
                      '{"id": "4", "source": "No.", "reference": "No.", "meta": {"tags": [{"a": 1, "a": 2}]}}\n',
                      encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        read_corpus(corpus)
    assert [(p.path, p.message, p.hint) for p in refused.value.problems] == [
        ("line 2", 'key "reference" appears more than once in an object', HINT),
        ("line 3", 'key "source" appears more than once in an object', HINT),
        ("line 4.meta.tags[0]", 'key "a" appears more than once in an object', HINT)]


@pytest.mark.parametrize(("shape", "entries"), [("list", "$"), ("upstream", "$.entries")])
def test_a_json_corpus_that_writes_a_key_twice_is_refused_with_the_path_of_its_entry(tmp_path: Path, shape: str,
                                                                                      entries: str):
    """It was said at ``$``, the whole file, where `mt_eval.json_input.parse_json` names the object."""
    first = '{"id": "1", "source": "Hi.", "reference": "Hola."}'
    entry = '{"id": "2", "source": "Hello.", "reference": "Hola.", "reference": "Adiós.", "meta": {"x": 1, "x": 2}}'
    text = f"[{first}, {entry}]" if shape == "list" else (
        '{"dataset": {"name": "d", "license": "CC0-1.0"}, "language_pair": {"source": "eng", "target": "spa"}, '
        f'"entries": [{first}, {entry}]}}')
    corpus = tmp_path / "dup.json"
    corpus.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        read_corpus(corpus)
    assert [(p.path, p.message) for p in refused.value.problems] == [
        (f"{entries}[1].meta", 'key "x" appears more than once in an object'),
        (f"{entries}[1]", 'key "reference" appears more than once in an object')]


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


def test_corpus_show_names_the_entry_that_writes_a_key_twice_and_fails(tmp_path: Path):
    corpus = tmp_path / "dup.json"
    corpus.write_text('[{"id": "1", "source": "Hi.", "reference": "Hola."},\n'
                      ' {"id": "2", "source": "Yes.", "reference": "Sí.", "reference": "Vale."}]', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "corpus", "show", str(corpus)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == (f'mt-eval corpus show: corpus {corpus} $[1]: key "reference" appears more than '
                                   f"once in an object; {HINT}")
