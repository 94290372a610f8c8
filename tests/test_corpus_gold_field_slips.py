"""A corpus's dataset.gold_fields hides only the names it lists: an entry field a slip away from one of them
(``post-edit`` beside ``"gold_fields": ["post_edit"]``) would reach the method, gold and all. Such a corpus is
refused before anything runs, as a misspelled field is; a declared gold field no entry has is a warning."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.corpus.doubts import DOUBTS
from mt_eval.harness.runcard import RunCard

PEEKING = Path(__file__).parent / "fixtures" / "peeking"


def write_corpus(tmp_path: Path, field: str, gold_fields: list[str]) -> Path:
    entries = [{"id": f"g{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}.", field: f"Frase {i}."}
               for i in range(6)]
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"dataset": {"name": "gold", "gold_fields": gold_fields},
                                "language_pair": {"source": "eng", "target": "spa"}, "entries": entries}))
    return path


def run(tmp_path: Path, corpus: Path, *extra: str) -> int:
    return main(["run", "--method", str(PEEKING), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                 "--quiet", "--resamples", "100", "--latency-sample", "0", "--no-contamination-check", *LENIENT,
                 *extra])


@pytest.mark.parametrize("field", ["post-edit", "postedit", "Post_Edit", "post_edti"])
def test_a_field_one_slip_from_a_declared_gold_field_is_refused(tmp_path: Path, field: str,
                                                               capsys: pytest.CaptureFixture[str]):
    code = run(tmp_path, write_corpus(tmp_path, field, ["post_edit"]))
    err = capsys.readouterr().err
    assert code == 1
    assert f'"{field}" (first at $.entries[0])' in err
    assert "gold and all" in err and 'did you mean "post_edit"?' in err
    assert "--accept-doubt misspelled-field" in err
    assert "misspelled-field" in DOUBTS
    assert not (tmp_path / "run" / "results.jsonl").exists()  # the method was handed nothing


def test_accepted_the_field_reaches_the_method_and_the_card_says_so(tmp_path: Path):
    code = run(tmp_path, write_corpus(tmp_path, "post-edit", ["post_edit"]), "--accept-doubt", "misspelled-field")
    assert code == 0
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert card.corpus.reading is not None and card.corpus.reading.accepted_doubts == ["misspelled-field"]
    assert {tuple(r.metadata["fields"]) for r in card.results} == {("id", "post-edit", "source")}


def test_the_declared_name_itself_is_hidden_and_nothing_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    code = run(tmp_path, write_corpus(tmp_path, "post_edit", ["post_edit"]))
    assert code == 0
    assert "gold_fields" not in capsys.readouterr().err
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert {tuple(r.metadata["fields"]) for r in card.results} == {("id", "source")}


def test_a_declared_gold_field_that_no_entry_has_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    code = run(tmp_path, write_corpus(tmp_path, "pe", ["post_edit"]))
    assert code == 0
    err = capsys.readouterr().err
    assert 'dataset.gold_fields names "post_edit", which no entry has' in err
    assert "name the gold field in the entries as dataset.gold_fields does" in err


def test_corpus_show_says_it_as_a_run_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    corpus = write_corpus(tmp_path, "post-edit", ["post_edit"])
    main(["corpus", "show", str(corpus)])
    out = capsys.readouterr().out
    assert 'refused: field "post-edit" (first at $.entries[0]) is not a name dataset.gold_fields gives the gold' in out
