"""A decision corpus as people write it: gold that does not sum to 1 is told how to write it (not a method's
words), a .jsonl file holding one indented JSON array is read as that array, and one saved as UTF-16 is refused
once, naming the file."""

from __future__ import annotations

import json

from mt_eval.cli import main


def test_gold_that_does_not_sum_to_1_says_how_to_write_it(tmp_path, capsys):
    """Before, gold was told it is "never renormalised; return a distribution", a method's words: gold is written,
    not returned, and shares within the tolerance are scaled to 1."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "r1", "state": {}, "questions": {"q": {"type": "noul", "instructions": "?"}},
                                  "gold": {"q": {"true": 0.5, "false": 0.6}}}) + "\n", encoding="utf-8")
    assert main(["decide", "check", "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert "gold distribution: probabilities sum to 1.1, not 1 (within 0.001): write shares that sum to 1" in err
    assert "return a distribution" not in err


ROW = {"id": "r1", "state": {}, "questions": {"q": {"type": "noul", "instructions": "?"}}, "gold": {"q": "true"}}


def test_a_jsonl_corpus_holding_one_indented_json_array_is_read_as_that_array(tmp_path, capsys):
    """Before, each of its lines was refused as cut-off JSON (36 problems for two rows)."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps([ROW, {**ROW, "id": "r2"}], indent=2) + "\n", encoding="utf-8")
    assert main(["decide", "check", "--corpus", str(corpus)]) == 0
    assert "(2 gold questions): passed" in capsys.readouterr().out


def test_a_jsonl_corpus_in_utf16_is_refused_once_naming_the_file(tmp_path, capsys):
    """Before, it was refused once a line, each time naming "c.jsonl:1" as the file to convert with iconv."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({**ROW, "id": f"r{i}"}) + "\n" for i in range(3)), encoding="utf-16")
    assert main(["decide", "check", "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert "c.jsonl: 1 problem" in err and f"{corpus}: UTF-16 text, not UTF-8" in err
    assert f"iconv -f UTF-16 -t UTF-8 {corpus} > {corpus}.utf8" in err and ".jsonl:1" not in err


def test_a_jsonl_line_cut_short_is_said_of_the_line_not_the_file(tmp_path):
    """The problem's file names the line (``c.jsonl:2``): its column is said, not "line 1", and the hint says the line,
    not the file, looks cut off (the file may well go on)."""
    import pytest

    from mt_eval.decisions.corpus import read_decision_corpus
    from mt_eval.problems import ProblemsError

    whole = '{"id": "a", "state": {"source": "x"}, "questions": {"ok": {"type": "binary"}}}'
    corpus = tmp_path / "c.jsonl"
    other = whole.replace('"a"', '"b"')
    corpus.write_text(f"{whole}\n{whole[:40]}\n{other}\n", encoding="utf-8")
    with pytest.raises(ProblemsError) as caught:
        read_decision_corpus(corpus)
    [problem] = [p for p in caught.value.problems if p.code == "syntax"]
    assert problem.file == f"{corpus}:2"
    assert problem.message == "invalid JSON at column 39: Unterminated string"
    assert problem.hint is not None and problem.hint.endswith("the line looks cut off")
