"""The answer rules: what a method returned for each row, checked against the questions it was asked.

Every place that receives decisions from a method (the harness, grading, the hosts) applies `check_result`.
A probability distribution must name every option of its question, only those, each between 0 and 1, and sum
to 1 within ``tolerance``; anything else becomes that question's error, with the reason. Nothing is ever
renormalised. ``bridge/vectors/decisions/answers.json`` pins these rules (and their wording) for both runtimes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from mt_eval.decisions.records import (
    DecisionResult,
    DecisionRow,
    Question,
    QuestionAnswer,
    describe,
    exact_text,
    not_a_list,
    number_text,
)
from mt_eval.decisions.records import finite as _finite
from mt_eval.lone_surrogates import capped
from mt_eval.records import Usage

DEFAULT_TOLERANCE = 1e-3
_RESULT_FIELDS = frozenset(DecisionResult.__struct_encode_fields__)
_ANSWER_FIELDS = frozenset(QuestionAnswer.__struct_encode_fields__)
_USAGE_FIELDS = frozenset(Usage.__struct_encode_fields__)


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def _options(names: Sequence[str]) -> str:
    return "options" if len(names) > 1 else "option"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


RETURN_ONE = "they are never renormalised; return a distribution that sums to 1"  # (a method's answer)


def distribution_problem(question: Question, probabilities: Any, tolerance: float = DEFAULT_TOLERANCE, *,
                         sum_fix: str = RETURN_ONE) -> str | None:
    """Why ``probabilities`` is not a distribution over the question's options (None when it is); ``sum_fix``
    says how to mend one that does not sum to 1."""
    options = question.option_names
    if not isinstance(probabilities, Mapping):
        return 'probabilities must be an object {"option": probability, ...}'
    unknown = [key for key in probabilities if key not in options]
    if unknown:
        return f"unknown {_options(unknown)} {_quoted(unknown)} (the options are {_quoted(options)})"
    missing = [option for option in options if option not in probabilities]
    if missing:
        return f"missing {_options(missing)} {_quoted(missing)}: give a probability for every option"
    for option in options:
        value = probabilities[option]
        if not _is_number(value) or not _finite(value) or not 0 <= value <= 1:
            return f'the probability of "{option}" is {describe(value)}: each must be a number from 0 to 1'
    total = math.fsum(probabilities[option] for option in options)
    if abs(total - 1) > tolerance:
        rounded = number_text(total)  # (exact only where the rounded sum would read as within the tolerance)
        said = exact_text(total) if abs(float(rounded) - 1) <= tolerance else rounded
        return f"probabilities sum to {said}, not 1 (within {exact_text(tolerance)}): {sum_fix}"
    return None


def expected_value(question: Question, probabilities: Mapping[str, float]) -> float:
    """Σ probability × level value of a score question."""
    return math.fsum(probabilities[level.name] * level.value for level in question.levels or [])


def check_answer(question: Question, raw: Any, tolerance: float = DEFAULT_TOLERANCE) -> QuestionAnswer:
    """One question's answer in its checked form (an error answer when the rules are broken)."""
    if raw is None:
        return QuestionAnswer(error="no answer for this question")
    if not isinstance(raw, Mapping):
        return QuestionAnswer(error='an answer must be an object: {"probabilities": {...}} or {"error": "..."}')
    unknown = [key for key in raw if key not in _ANSWER_FIELDS]
    if unknown:
        return QuestionAnswer(error=f"unknown field {_quoted(unknown)} in the answer (an answer has "
                                    f'"probabilities", "expected" and "error")')
    error = raw.get("error")
    if error is not None:
        return QuestionAnswer(error=capped(error if isinstance(error, str) else msgspec.json.encode(error).decode()))
    probabilities = raw.get("probabilities")
    if probabilities is None:
        return QuestionAnswer(error='the answer has neither "probabilities" nor "error"')
    problem = distribution_problem(question, probabilities, tolerance)
    if problem is not None:
        return QuestionAnswer(error=problem)
    ordered = {option: float(probabilities[option]) for option in question.option_names}
    if question.type != "score":
        if raw.get("expected") is not None:
            return QuestionAnswer(error=f'"expected" belongs to score questions, not {question.type} questions')
        return QuestionAnswer(probabilities=ordered)
    expected = expected_value(question, ordered)
    given = raw.get("expected")
    if given is not None:
        levels = question.levels or []
        span = levels[-1].value - levels[0].value if levels else 0.0
        if not _is_number(given) or not _finite(given) or abs(given - expected) > tolerance * max(span, 1.0):
            gives = number_text(expected)  # (exact only where rounded it would read as the value given)
            if _is_number(given) and _finite(given) and gives == number_text(given):
                gives = exact_text(expected)
            return QuestionAnswer(error=f"the expected value {describe(given)} does not match the probabilities, "
                                        f"which give {gives}")
    return QuestionAnswer(probabilities=ordered, expected=expected)


def check_result(row: DecisionRow, raw: Mapping[str, Any], tolerance: float = DEFAULT_TOLERANCE) -> DecisionResult:
    """A method's result for ``row`` in its checked form: every asked question answered or failed, with reasons."""
    row_id = row.id
    unknown = [key for key in raw if key not in _RESULT_FIELDS]
    if unknown:
        return DecisionResult(id=row_id, error=f"unknown field {_quoted(unknown)} in the result (put extra data in "
                                               '"metadata")')
    base, problem = _envelope(row_id, raw)
    if problem is not None:
        return DecisionResult(id=row_id, error=f"the result is malformed: {problem}", latency_s=base.latency_s)
    if base.error is not None:
        return base
    answers = raw.get("answers")
    if answers is None:
        answers = {}
    if not isinstance(answers, Mapping):
        base.error = '"answers" must be an object {"question": answer, ...}'
        return base
    unasked = [name for name in answers if name not in row.questions]
    if unasked:
        base.error = (f"answers to questions that were not asked: {_quoted(unasked)} (this row asks "
                      f"{_quoted(list(row.questions))})")
        return base
    base.answers = {name: check_answer(question, answers.get(name), tolerance)
                    for name, question in row.questions.items()}
    return base


def _holds_non_finite(value: Any, skipped: str | None = None, seen: set[int] | None = None) -> bool:
    """Whether ``value`` holds a number JSON cannot carry (NaN, ±Infinity), the field ``skipped`` of its top level
    aside; what refers to itself is left for the encoder to refuse."""
    if _is_number(value):
        return not _finite(value)
    if not isinstance(value, Mapping | list):
        return False
    seen = set() if seen is None else seen
    if id(value) in seen:
        return False
    seen.add(id(value))
    items = value.items() if isinstance(value, Mapping) else enumerate(value)
    return any(key != skipped and _holds_non_finite(item, None, seen) for key, item in items)


def sendable_results(rows: Sequence[Mapping[str, Any]], results: list[Any]) -> list[Any]:
    """A guest's decisions as it sends them (in the method's order). JSON has no NaN nor Infinity: the host would
    read one as null, and say a probability of NaN is null, or take an expected value or a latency of NaN for none
    given. A result holding one (outside its metadata) is checked here, as the host checks it in process: a row it
    fails is sent failed, and an answer holding one is sent as its error, in the same words. The host checks the
    rest (the sums within its own tolerance) as it always does."""
    by_id: dict[Any, Mapping[str, Any]] | None = None
    out: list[Any] = []
    for item in results:
        if not isinstance(item, Mapping) or not _holds_non_finite(item, "metadata"):
            out.append(item)
            continue
        by_id = by_id if by_id is not None else {row["id"]: row for row in rows}
        given = by_id.get(item.get("id"))
        if given is None:  # (a result for no row: the host says it)
            out.append(item)
            continue
        row = msgspec.convert(given, DecisionRow)
        checked = check_result(row, item, math.inf)
        if checked.error is not None:
            out.append(msgspec.to_builtins(checked))
            continue
        answers = dict(item["answers"])
        for name in row.questions:
            if _holds_non_finite(answers.get(name)):
                answers[name] = msgspec.to_builtins(checked.answers[name])
        out.append({**item, "answers": answers})
    return out


def _envelope(row_id: str, raw: Mapping[str, Any]) -> tuple[DecisionResult, str | None]:
    """The result's own fields (latency, usage, error, metadata), or the first that is malformed."""
    latency, usage, error, metadata = (raw.get(key) for key in ("latency_s", "usage", "error", "metadata"))
    result = DecisionResult(id=row_id)
    if latency is not None:
        if not (_is_number(latency) and _finite(latency) and latency >= 0):
            return result, f'"latency_s" must be a number >= 0, got {describe(latency)}'
        result.latency_s = float(latency)
    if usage is not None:
        if not isinstance(usage, Mapping):
            return result, f'"usage" must be an object, got {describe(usage)}'
        for key, count in usage.items():
            if key not in _USAGE_FIELDS:
                return result, f'unknown field "usage.{key}"'
            if count is not None and not (isinstance(count, int) and not isinstance(count, bool) and count >= 0):
                return result, f'"usage.{key}" must be an integer >= 0, got {describe(count)}'
        result.usage = Usage(**{key: count for key, count in usage.items() if count is not None})
    if error is not None and not isinstance(error, str):
        return result, f'"error" must be a string or null, got {describe(error)}'
    result.error = None if error is None else capped(error)  # (a method's own words, of any length)
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            return result, f'"metadata" must be an object, got {describe(metadata)}'
        try:  # (it is saved with the row: a value JSON cannot hold would fail the run, not this row)
            _METADATA_ENCODER.encode(metadata)
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
            return result, f'"metadata" cannot be saved as JSON: {exc}'
        result.metadata = dict(metadata)
    return result, None


_METADATA_ENCODER = msgspec.json.Encoder()


def match_results(rows: Sequence[DecisionRow], raw: Any, label: str, tolerance: float = DEFAULT_TOLERANCE
                  ) -> tuple[list[DecisionResult], list[Any]]:
    """One checked result per row, in row order, and the results whose id matches no row.

    A row with no result or with several gets a row error; ``raw`` that is not a list fails every row.
    """
    if not isinstance(raw, list):
        return [DecisionResult(id=row.id, error=not_a_list(label, raw)) for row in rows], []
    found: dict[str, list[Mapping[str, Any]]] = {row.id: [] for row in rows}
    unknown: list[Any] = []
    for item in raw:
        item_id = item.get("id") if isinstance(item, Mapping) else None
        if isinstance(item_id, str) and item_id in found:
            found[item_id].append(item)
        else:
            unknown.append(item)
    out = []
    for row in rows:
        given = found[row.id]
        if not given:
            out.append(DecisionResult(id=row.id, error=f"{label} returned no result for this row"))
        elif len(given) > 1:
            out.append(DecisionResult(id=row.id, error=f"{label} returned {len(given)} results for this row"))
        else:
            out.append(check_result(row, given[0], tolerance))
    return out, unknown
