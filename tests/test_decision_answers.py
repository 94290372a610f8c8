"""The answer rules: the shared vectors, the row pairing, and the Structs' own rules for questions and rows."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.decisions.answers import check_result, match_results
from mt_eval.decisions.records import DecisionCase, DecisionRow, Question, number_text
from mt_eval.strict import decode_value

VECTORS = json.loads((Path(__file__).parent.parent / "bridge" / "vectors" / "decisions" / "answers.json")
                     .read_text(encoding="utf-8"))["cases"]


def close(expected: Any, actual: Any) -> bool:
    if isinstance(expected, float | int) and isinstance(actual, float | int) and not isinstance(expected, bool):
        return math.isclose(expected, actual, rel_tol=0, abs_tol=1e-12)
    if isinstance(expected, dict):
        return isinstance(actual, dict) and list(expected) == list(actual) and all(
            close(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(close, expected, actual))
    return bool(expected == actual)


@pytest.mark.parametrize("case", VECTORS, ids=lambda c: c["name"])
def test_the_shared_answer_vectors(case):
    row = msgspec.convert(case["row"], DecisionRow)
    result = check_result(row, case["result"], case.get("tolerance", 1e-3))
    assert close(case["expect"], msgspec.to_builtins(result)), msgspec.to_builtins(result)


def test_the_vectors_cover_every_rule():
    errors = " ".join(json.dumps(c["expect"]) for c in VECTORS)
    for words in ("sum to", "missing option", "unknown option", "each must be a number from 0 to 1",
                  "not asked", "no answer for this question", "does not match the probabilities", "malformed"):
        assert words in errors, words


def test_results_are_paired_with_rows_by_id():
    rows = [msgspec.convert({"id": i, "state": {}, "questions": {"q": {"type": "noul", "instructions": "?"}}},
                            DecisionRow) for i in ("a", "b", "c")]
    answer = {"q": {"probabilities": {"true": 1, "false": 0}}}
    results, unknown = match_results(rows, [{"id": "c", "answers": answer}, {"id": "a", "answers": answer},
                                            {"id": "a", "answers": answer}, {"id": "zz"}, "junk"], "the method")
    assert [(r.id, r.error) for r in results] == [
        ("a", "the method returned 2 results for this row"), ("b", "the method returned no result for this row"),
        ("c", None)]
    assert unknown == [{"id": "zz"}, "junk"]
    results, _ = match_results(rows, None, "the method")
    assert {r.error for r in results} == {"the method returned null, not a list with one result per row"}


def problems(data: dict[str, Any], type_: Any = DecisionRow) -> list[str]:
    _, found = decode_value(data, type_, file="corpus.jsonl")
    return [f"{p.path}: {p.message}" for p in found]


def row(question: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"id": "r7", "state": {"source": "x"}, "questions": {"quality": question}, **more}


@pytest.mark.parametrize(("question", "message"), [
    ({"type": "rating", "instructions": "?"}, '$.questions.quality.type: the string "rating" is not a valid question '
                                              "type"),
    ({"type": "choice", "instructions": "?"}, '$.questions.quality: a "choice" question needs "options"'),
    ({"type": "choice", "instructions": "?", "options": ["a"]}, "$.questions.quality.options: needs 2 to 255 options, "
                                                                "got 1"),
    ({"type": "choice", "instructions": "?", "options": ["a", "a"]}, '$.questions.quality.options: "a" is listed 2 '
                                                                     "times"),
    ({"type": "score", "instructions": "?"}, '$.questions.quality: a "score" question needs "levels"'),
    ({"type": "score", "instructions": "?", "levels": {"0": "bad", "1": "good"}},
     "$.questions.quality.levels: expected an array of objects, got an object"),
    ({"type": "score", "instructions": "?", "levels": [{"value": 2}, {"value": 1}, {"value": 3}]},
     "$.questions.quality.levels[1].value: the rubric is not in order: level 1 has value 1, not more than level 0's 2"),
    ({"type": "score", "instructions": "?", "levels": [{"label": "bad"}, {"label": "good"}]},
     '$.questions.quality.levels[0].value: required field "value" is missing'),
    ({"type": "noul", "instructions": "?", "options": ["y", "n"]}, '$.questions.quality.options: a "noul" question '
                                                                   'has no "options"'),
    ({"type": "noul", "instructions": "?", "criteria": {"yes": "..."}}, '$.questions.quality.criteria.yes: "yes" is '
                                                                        "not an option of this question"),
])
def test_bad_questions_are_named_by_row_and_question(question, message):
    found = problems(row(question))
    assert any(p.startswith(message) for p in found), found


def test_a_rubric_without_order_says_how_to_fix_it():
    _, found = decode_value(row({"type": "score", "instructions": "?", "levels": {"0": "bad"}}), DecisionRow, file="f")
    assert "a rubric is ordered: list its levels lowest first" in (found[0].hint or "")


def test_rows_need_questions_and_gold_must_name_them():
    assert problems({"id": "r1", "state": {}, "questions": {}}) == ["$.questions: a row needs at least one question"]
    assert problems(row({"type": "noul", "instructions": "?"}, gold={"qualty": "true"}), DecisionCase) == [
        '$.gold.qualty: no question "qualty" in this row']


def test_gold_for_a_row_without_questions_says_the_row_asks_none():
    """Before: "give gold answers for the row's questions: " and an empty list."""
    _, found = decode_value({"id": "r1", "state": {}, "questions": {}, "gold": {"better": "a"}}, DecisionCase,
                            file="corpus.jsonl")
    assert [p.hint for p in found if p.path == "$.gold.better"] == [
        'the row asks no questions: add "better" to its "questions", or remove its gold answer']
    _, found = decode_value(row({"type": "noul", "instructions": "?"}, gold={"qualty": "true"}), DecisionCase,
                            file="corpus.jsonl")
    assert found[0].hint == "give gold answers for the row's questions: quality"


def test_options_of_each_type():
    noul, choice, score = (msgspec.convert(q, Question) for q in (
        {"type": "noul", "instructions": "?"}, {"type": "choice", "instructions": "?", "options": ["x", "y"]},
        {"type": "score", "instructions": "?", "levels": [{"value": 0}, {"value": 2.5}, {"value": 5, "label": "top"}]}))
    assert (noul.option_names, choice.option_names, score.option_names) == (
        ["true", "false"], ["x", "y"], ["0", "2.5", "top"])
    assert [number_text(v) for v in (1.0, 0.1 + 0.2, 1e-7, -0.0, 2 / 3)] == ["1", "0.3", "0", "0", "0.666667"]


ODD_PY = """
class Odd:
    async def decide(self, rows, config):
        given = rows[0]["state"]["give"]
        if given in ("object", "null", "text"):
            return {"object": {"id": rows[0]["id"]}, "null": None, "text": "oops"}[given]
        value = {"nan": float("nan"), "huge": 10 ** 400, "complex": 1j}[given]
        return [{"id": rows[0]["id"], "answers": {"q": {"probabilities": {"true": value, "false": 0}}}}]
"""
ODD_JS = """
export async function decide(rows) {
  const given = rows[0].state.give;
  if (given === 'object') return { id: rows[0].id };
  if (given === 'null') return null;
  if (given === 'text') return 'oops';
  const value = { nan: NaN, huge: Infinity }[given];
  return [{ id: rows[0].id, answers: { q: { probabilities: { true: value, false: 0 } } } }];
}
"""
NOT_A_LIST = {"object": "the method returned an object, not a list with one result per row",
              "null": "the method returned null, not a list with one result per row",
              "text": 'the method returned "oops", not a list with one result per row'}


@pytest.mark.parametrize("runtime", ["in process", "isolated", "node"])
def test_an_odd_answer_fails_its_rows_in_the_same_words_whichever_runtime_ran_it(make_plugin, tmp_path, runtime):
    """Before, a return that was not a list was worded three ways (the Node guest's as a TypeError the method
    never threw), and an in-process value JSON cannot hold (10**400, a complex, numpy.float32) ended the run."""
    if runtime == "node":
        manifest = {"name": "Odd", "node_entry": "decide.js", "implements": ["decide"], "dependencies": []}
        files = {"decide.js": ODD_JS, "package.json": '{"type": "module"}'}
    else:
        manifest = {"name": "Odd", "entry_point": "pipeline:Odd", "implements": ["decide"], "dependencies": []}
        files = {"pipeline.py": ODD_PY}
    plugin = make_plugin(manifest, files=files, name="odd")
    givens = [*NOT_A_LIST, "nan", "huge"] + (["complex"] if runtime == "in process" else [])
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"r-{g}", "state": {"give": g}, "questions": {
        "q": {"type": "noul", "instructions": "?"}}}) + "\n" for g in givens))
    out = tmp_path / "out"
    isolate = ["--isolate"] if runtime == "isolated" else []
    assert main(["decide", "run", "--method", str(plugin), "--corpus", str(corpus), "--out", str(out), "--batch-size",
                 "1", "--resamples", "0", "--quiet", *isolate]) == 4
    errors = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        result = json.loads(line)
        errors[result["id"]] = result["error"] or result["answers"]["q"]["error"]
    assert {f"r-{g}": errors[f"r-{g}"] for g in NOT_A_LIST} == {f"r-{g}": said for g, said in NOT_A_LIST.items()}
    # (JSON has no NaN nor Infinity: a guest says them before it sends its answer, which had them read as null)
    for given, said in (("nan", "NaN"), ("huge", "Infinity")):
        assert errors[f"r-{given}"] == (f'the probability of "true" is {said}: each must be a number from 0 to 1'), \
            given
    if runtime == "in process":
        assert errors["r-complex"] == ('the probability of "true" is a builtins.complex (not a JSON value): each '
                                       "must be a number from 0 to 1")


def test_the_summary_shows_five_distinct_failures_and_says_how_many_more_the_card_lists(make_plugin, tmp_path):
    """Before, the sixth and later were left out without a word."""
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"r{i}", "state": {}, "questions": {
        "q": {"type": "noul", "instructions": "?"}}, "gold": {"q": "true"}}) + "\n" for i in range(9)))
    plugin = make_plugin({"name": "Fails", "entry_point": "pipeline:Fails", "implements": ["decide"],
                          "dependencies": []}, files={"pipeline.py": """
        class Fails:
            async def decide(self, rows, config):
                return [{'id': r['id'], 'error': 'reason ' + r['id']} if r['id'] != 'r8' else
                        {'id': 'r8', 'answers': {'q': {'probabilities': {'true': 1, 'false': 0}}}} for r in rows]
        """})
    from mt_eval.decisions.card import DecisionCard
    from mt_eval.decisions.summary import failure_lines

    assert main(["decide", "run", "--method", str(plugin), "--corpus", str(corpus), "--out", str(tmp_path / "out"),
                 "--resamples", "0", "--quiet"]) == 0
    card = msgspec.json.decode((tmp_path / "out" / "card.json").read_bytes(), type=DecisionCard)
    lines = failure_lines(card)
    assert lines[0] == "8 distinct failures (8 in all):"
    assert sum(line.startswith("  failed ×1: reason r") for line in lines) == 5
    assert lines[-1] == '  … and 3 more distinct failures (3 in all): the card\'s "failures" lists every one'

