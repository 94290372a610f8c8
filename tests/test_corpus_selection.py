"""Selections of a corpus (--ids, --segment, --limit): what they select, their own sha256, and what is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.corpus import CorpusError, SelectionRequest, read_corpus, select
from mt_eval.corpus.selection import request_from_facts, subset_sha256


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def selected(corpus, *ids: str, segments=(), limit=None):
    return select(corpus, SelectionRequest(ids=list(ids), segments=list(segments), limit=limit))


@pytest.fixture
def numbered(tmp_path: Path):
    entries = [{"id": i if i % 2 else f"s{i}", "source": f"Sentence {i} here.", "reference": f"Frase {i}.",
                "segment": "odd" if i % 2 else "even"} for i in range(1, 11)]
    return read_corpus(write(tmp_path, "n.json", json.dumps(entries)))


def test_selection_by_ids_ranges_segments_and_limit(numbered, tmp_path: Path):
    ids = lambda selection: [e["id"] for e in selection.entries]  # noqa: E731
    assert ids(selected(numbered, "3,s2", "s10")) == ["s2", "3", "s10"]
    assert ids(selected(numbered, "s4..7")) == ["s4", "5", "s6", "7"]
    assert ids(selected(numbered, "s8..")) == ["s8", "9", "s10"] and ids(selected(numbered, "..s2")) == ["1", "s2"]
    assert ids(selected(numbered, segments=["even"], limit=2)) == ["s2", "s4"]
    assert ids(selected(numbered, "1..5", segments=["odd"])) == ["1", "3", "5"]
    write(tmp_path, "ids.txt", "s6\n\n9\n")
    assert ids(selected(numbered, f"@{tmp_path / 'ids.txt'}")) == ["s6", "9"]
    facts = selected(numbered, "3,s2,1..s2", limit=5).facts
    assert facts is not None
    assert (facts["ids"], facts["ranges"], facts["limit"]) == ([3, "s2"], ["1..s2"], 5)
    assert (facts["entries_in_corpus"], facts["entries_selected"]) == (10, 3)
    assert selected(numbered).facts is None


def test_an_ids_file_matches_an_id_with_spaces_as_written_and_trims_the_others(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "spaced.json", json.dumps([
        {"id": " lead", "source": "A.", "reference": "Un."}, {"id": "lead", "source": "B.", "reference": "Dos."},
        {"id": "tail ", "source": "C.", "reference": "Tres."}, {"id": "plain", "source": "D.", "reference": "Cua."}])))
    write(tmp_path, "ids.txt", " lead\ntail \n  plain  \n")
    assert [e["id"] for e in selected(corpus, f"@{tmp_path / 'ids.txt'}").entries] == [" lead", "tail ", "plain"]


def test_a_subset_has_its_own_sha256_and_a_recorded_selection_reproduces_it(numbered):
    part = selected(numbered, "1..5", segments=["odd"], limit=2)
    assert part.facts is not None
    assert part.facts["subset_sha256"] == subset_sha256(numbered, part.entries)
    assert part.facts["subset_sha256"] != subset_sha256(numbered, numbered.entries)
    again = select(numbered, request_from_facts(part.facts))
    assert again.facts == part.facts


@pytest.mark.parametrize(("request_", "message"), [
    (SelectionRequest(ids=["3,99,100"]), '--ids: no entry has the ids "99", "100"'),
    (SelectionRequest(ids=["7..3"]), '--ids 7..3: "7" comes after "3" in the corpus'),
    (SelectionRequest(ids=["3..42"]), '--ids 3..42: no entry has the id "42"'),
    (SelectionRequest(segments=["weather"]), '--segment: no entry is in "weather"; the corpus has 2 segments: '
                                             '"even", "odd"'),
    (SelectionRequest(limit=0), "--limit 0 selects no entries"),
    (SelectionRequest(ids=["s2"], segments=["odd"]), "the selection matches no entry"),
    (SelectionRequest(ids=[""]), "--ids '' names no id; give ids and ranges, comma-separated, e.g. --ids 3,7,10..20"),
    (SelectionRequest(ids=[",,"]), "--ids ',,' names no id"),
    (SelectionRequest(ids=["3", " "]), "--ids ' ' names no id"),
    (SelectionRequest(ids=["@/dev/null"]), "--ids @/dev/null: the file names no id; write one id per line"),
])
def test_selections_that_cannot_be_made_are_refused(numbered, request_, message):
    with pytest.raises(CorpusError) as caught:
        select(numbered, request_)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("ids", "message"), [
    (r'a"b..x\y', r'--ids a"b..x\y: no entry has the id "x\\y"'),
    (r'c\d..a"b', r'--ids c\d..a"b: "c\\d" comes after "a\"b" in the corpus'),
    (r'a"b,x\y,e"f', r'--ids: no entry has the ids "x\\y", "e\"f"'),
])
def test_a_range_or_a_list_names_its_ids_json_quoted(tmp_path: Path, ids: str, message: str):
    """An id holding a quote or a backslash reads unambiguously, as JSON writes it."""
    corpus = read_corpus(write(tmp_path, "q.json", json.dumps([{"id": 'a"b', "source": "x"},
                                                              {"id": "c\\d", "source": "y"}])))
    with pytest.raises(CorpusError) as caught:
        select(corpus, SelectionRequest(ids=[ids]))
    assert message in str(caught.value)


def test_an_id_a_card_recorded_that_the_corpus_lacks_is_named_json_quoted(tmp_path: Path):
    """It was written as Python writes a string ('x\\\\y'), where every other message writes JSON."""
    corpus = read_corpus(write(tmp_path, "q.json", json.dumps([{"id": 'a"b', "source": "x"}])))
    with pytest.raises(CorpusError) as caught:
        select(corpus, SelectionRequest(exact_ids=['a"b', "x\\y"]))
    assert 'no entry has the id "x\\\\y", which the card\'s selection names' in str(caught.value)


def test_segment_selection_needs_segments(tmp_path: Path):
    corpus = read_corpus(write(tmp_path, "plain.tsv", "Hi there\tHola\n"))
    with pytest.raises(CorpusError, match="no entry has a segment field"):
        selected(corpus, segments=["news"])


def test_a_segment_the_corpus_lacks_is_named_json_quoted_as_ids_are(tmp_path: Path, capsys):
    """Before: ``no entry is in new"s, x; the corpus has 2 segments: news one, web``, which cannot be read back."""
    from mt_eval.cli import main

    corpus = write(tmp_path, "s.jsonl", "".join(json.dumps({"id": str(n), "source": "Hi", "segment": segment}) + "\n"
                                                for n, segment in enumerate(["news one", "web"])))
    assert main(["corpus", "show", str(corpus), "--segment", 'new"s', "--segment", "x"]) == 1
    assert capsys.readouterr().err == (f'mt-eval corpus show: corpus {corpus}: --segment: no entry is in "new\\"s", '
                                       '"x"; the corpus has 2 segments: "news one", "web"\n')
