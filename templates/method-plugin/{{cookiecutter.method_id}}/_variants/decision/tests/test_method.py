"""This plugin's own tests: ``python -m pytest tests``, with the mt-eval SDK and pytest installed (README.md,
"Tests", says how)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.decisions.answers import match_results
from mt_eval.decisions.records import DecisionConfig, DecisionRow
from mt_eval.loader import load_method
from mt_eval.validate import validate_plugin

PLUGIN = Path(__file__).resolve().parent.parent
ROWS = [json.loads(line) for line in (PLUGIN / "sample" / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()]


def decide(rows: list[dict[str, Any]]) -> list[Any]:
    """Decide through the SDK's loader, every answer checked by the SDK's rules."""
    questions = [{k: v for k, v in row.items() if k != "gold"} for row in rows]
    raw = asyncio.run(load_method(PLUGIN).method.decide(questions, DecisionConfig()))
    checked, unknown = match_results([msgspec.convert(r, DecisionRow) for r in questions], raw, "the method")
    assert unknown == []
    return checked


def test_the_plugin_validates_with_its_declared_class():
    report = validate_plugin(PLUGIN)
    assert report.passed(strict=True), "\n".join(p.render() for p in report.problems)
    declared = json.loads((PLUGIN / "method.json").read_text(encoding="utf-8-sig"))["dependency_class"]
    assert report.derived_class == declared


def test_every_sample_question_gets_a_valid_distribution():
    results = decide(ROWS)
    assert [r.id for r in results] == [row["id"] for row in ROWS]
    for result in results:
        assert result.error is None
        assert all(answer.error is None for answer in result.answers.values()), result


def test_a_candidate_equal_to_its_reference_gets_the_top_level():
    [first, _, third, copied] = decide(ROWS[:4])
    assert first.answers["adequacy"].probabilities == {"0": 0.0, "1": 0.0, "2": 0.0, "3": 1.0}
    assert first.answers["acceptable"].probabilities == {"true": 1.0, "false": 0.0}
    assert third.answers["adequacy"].expected < first.answers["adequacy"].expected
    assert copied.answers["adequacy"].probabilities["0"] == 1.0


def test_choices_prefer_the_translation_closer_to_the_reference():
    result = decide(ROWS[4:5])[0]
    probabilities = result.answers["better"].probabilities
    assert probabilities["a"] > probabilities["tie"] > probabilities["b"]


def test_a_row_without_a_candidate_fails_its_question_with_the_reason():
    row = {"id": "x", "state": {"source": "Hello."}, "questions": {"ok": {"type": "noul", "instructions": "?"}}}
    [result] = decide([row])
    assert result.answers["ok"].error == 'the state has no "candidate" text'
