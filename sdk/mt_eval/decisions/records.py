"""What flows through ``decide``: rows with typed questions in, one result per row out.

A row carries an ``id``, a ``state`` (any JSON object: a source and a candidate translation, say) and named
questions. Each question is one of three types, and its *options* are what a result gives probabilities for:

- ``noul``: is the statement true? Options ``"true"`` and ``"false"``.
- ``choice``: one of N named options (``options``, in order).
- ``score``: an ordered rubric (``levels``, lowest first, each with a numeric ``value``); the options are the
  levels' labels, and a result also carries the expected value ``Σ p(level) · value``.

These Structs are the one source of truth: the JSON Schemas under ``bridge/schemas/`` are generated from them,
and the answer rules that both runtimes apply are pinned by ``bridge/vectors/decisions/``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import msgspec

from mt_eval.field_words import described
from mt_eval.js_text import js_number, js_string
from mt_eval.problems import Finding
from mt_eval.records import LanguageCode, NonNegative, RunConfig, Usage
from mt_eval.strict import StrictStruct

QuestionType = Literal["noul", "choice", "score"]
QUESTION_TYPES: tuple[QuestionType, ...] = ("noul", "choice", "score")
NOUL_OPTIONS: tuple[str, ...] = ("true", "false")
MAX_CHOICE_OPTIONS = 255
MAX_SCORE_LEVELS = 101

Name = Annotated[str, msgspec.Meta(min_length=1)]


MAX_LEVEL_VALUE = 1e15  # a score level's value lies within ±this: each runtime writes it the same way


def number_text(value: float) -> str:
    """A number as both runtimes print it in labels and messages: at most six decimals, no trailing zeros (from
    1e21 on, as JavaScript's toFixed writes it: 1e+21)."""
    if 1e21 <= abs(value) < math.inf:
        return js_number(value)
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def exact_text(value: float) -> str:
    """A number in a message where a rounded one could read as another (a probability of 1.0000000000000002 as "1",
    a sum of 1.0010001 as "1.001" against a tolerance of 0.001): `number_text` when it reads back as the number, else
    its shortest exact form as JavaScript writes it (0.00001234, 1.5e-7), so both runtimes say the same."""
    text = number_text(value)
    return text if float(text) == value else js_number(value)


def finite(value: int | float) -> bool:
    """Whether a number is one JSON can carry (an integer past any float is Infinity to JavaScript)."""
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past any float: Infinity to JavaScript
        return False


def describe(value: Any) -> str:
    """A value in a message, worded as the Node side words it."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, tuple | set | frozenset) or (hasattr(value, "__iter__") and hasattr(value, "__next__")):
        return f"a {type(value).__name__}"  # (JSON would show a tuple as a list: "returned [...], not a list")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if finite(value):
            return exact_text(value)
        return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):  # (numpy.float32, a complex number: no JSON value)
        return f"a {type(value).__module__}.{type(value).__qualname__} (not a JSON value)"
    return text if len(text) <= 60 else text[:57] + "..."


def not_a_list(label: str, raw: Any) -> str:
    """Why no row got its result: ``label`` (e.g. "the method") returned ``raw``, not a list."""
    return f"{label} returned {describe(raw)}, not a list with one result per row"


class ScoreLevel(StrictStruct, kw_only=True):
    """One level of a score rubric."""

    value: Annotated[int | float, msgspec.Meta(
        description="The level's number; levels are listed in increasing value.")]
    label: Annotated[str, msgspec.Meta(
        min_length=1, description="The option name results use for this level (default: the value, e.g. \"3\").")
    ] | None = None
    description: str | None = None

    @property
    def name(self) -> str:
        return self.label if self.label is not None else number_text(self.value)


class Question(StrictStruct, kw_only=True):
    """A typed question: ``noul`` (true or false), ``choice`` (one of ``options``) or ``score`` (``levels``)."""

    type: Annotated[QuestionType, described(what="question type")]
    instructions: Annotated[str, msgspec.Meta(min_length=1, description="What is asked, in words.")]
    options: Annotated[list[Name], msgspec.Meta(
        description="choice: the option names, in order.")] | None = None
    levels: Annotated[list[ScoreLevel], described(
        description="score: the rubric's levels, lowest value first.",
        hint='a rubric is ordered: list its levels lowest first, e.g. [{"value": 0, "description": "..."}, '
             '{"value": 1, "description": "..."}]')] | None = None
    criteria: Annotated[dict[str, str], msgspec.Meta(
        description='noul: what counts as "true" and "false"; choice: a description per option.')] | None = None

    @property
    def option_names(self) -> list[str]:
        """What a result gives a probability for, in order."""
        if self.type == "noul":
            return list(NOUL_OPTIONS)
        if self.type == "choice":
            return list(self.options or [])
        return [level.name for level in self.levels or []]

    def findings(self) -> Iterator[Finding]:
        kind = f'a "{self.type}" question'
        if self.type == "choice":
            yield from _choice_findings(self.options, kind)
        elif self.options is not None:
            yield Finding(("options",), f'{kind} has no "options"', 'remove "options" (only "choice" questions '
                          "list options)", code="unused")
        if self.type == "score":
            yield from score_findings(self.levels, kind)
        elif self.levels is not None:
            yield Finding(("levels",), f'{kind} has no "levels"', 'remove "levels" (only "score" questions have '
                          "levels)", code="unused")
        if self.criteria is not None:
            if self.type == "score":
                yield Finding(("criteria",), 'a "score" question describes its levels in "levels"',
                              'move each description to its level\'s "description"', code="unused")
            else:
                known = self.option_names
                for key in self.criteria:
                    if key not in known:
                        yield Finding(("criteria", key), f'"{key}" is not an option of this question',
                                      f"describe only the options: {', '.join(known)}", code="unknown-option")


def _choice_findings(options: list[str] | None, kind: str) -> Iterator[Finding]:
    if options is None:
        yield Finding((), f'{kind} needs "options"', 'add "options": ["first", "second", ...]', code="missing")
        return
    if not 2 <= len(options) <= MAX_CHOICE_OPTIONS:
        yield Finding(("options",), f"needs 2 to {MAX_CHOICE_OPTIONS} options, got {len(options)}",
                      "list at least two options", code="length")
    for option, count in Counter(options).items():
        if count > 1:
            yield Finding(("options",), f'"{option}" is listed {count} times', "list each option once",
                          code="duplicate")


def score_findings(levels: list[ScoreLevel] | None, kind: str = 'a "score" question') -> Iterator[Finding]:
    """What is wrong with a score question's (or a rubric's) levels: too few or many, out of order, labels reused."""
    if levels is None:
        yield Finding((), f'{kind} needs "levels"', 'add "levels": [{"value": 0, "description": "..."}, ...], '
                      "lowest first", code="missing")
        return
    if not 2 <= len(levels) <= MAX_SCORE_LEVELS:
        yield Finding(("levels",), f"needs 2 to {MAX_SCORE_LEVELS} levels, got {len(levels)}",
                      "a rubric has at least two levels", code="length")
    for i, level in enumerate(levels):
        if not abs(level.value) <= MAX_LEVEL_VALUE:  # (1e400 reads as infinity, and prints differently in Node)
            shown = js_number(level.value) if math.isfinite(level.value) else \
                "NaN" if math.isnan(level.value) else "Infinity" if level.value > 0 else "-Infinity"
            why = "not a number" if shown == "NaN" else "too large to write the same way everywhere"
            yield Finding(("levels", i, "value"), f"{shown} is not a level value: {why}", f"give a number from "
                          f"-{MAX_LEVEL_VALUE:.0e} to {MAX_LEVEL_VALUE:.0e} (JSON has no infinity: a number too large "
                          "to hold is read as one)", code="range")
            return
    for i in range(1, len(levels)):
        if levels[i].value <= levels[i - 1].value:
            yield Finding(("levels", i, "value"),
                          f"the rubric is not in order: level {i} has value {number_text(levels[i].value)}, "
                          f"not more than level {i - 1}'s {number_text(levels[i - 1].value)}",
                          "list the levels from the lowest value to the highest, each value once", code="order")
    for name, count in Counter(level.name for level in levels).items():
        if count > 1:
            yield Finding(("levels",), f'the label "{name}" is used by {count} levels', "give each level its own "
                          "label", code="duplicate")


class DecisionRow(StrictStruct, kw_only=True):
    """One case to decide: its state and the questions asked about it."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    state: Annotated[dict[str, Any], msgspec.Meta(
        description="What the questions are about (any JSON object), e.g. a source and a candidate translation.")]
    questions: Annotated[dict[str, Question], msgspec.Meta(description="Named questions, at least one.")]

    def findings(self) -> Iterator[Finding]:
        if not self.questions:
            yield Finding(("questions",), "a row needs at least one question",
                          'add "questions": {"name": {"type": "noul", "instructions": "..."}}', code="length")
        for name in self.questions:
            if not name:
                yield Finding(("questions",), "a question name must not be empty", "name every question",
                              code="length")


GoldAnswer = str | bool | dict[str, float]


class DecisionCase(DecisionRow, kw_only=True):
    """A row of a typed-decision corpus: a `DecisionRow` with its gold answers.

    A gold answer is an option's name (for ``noul`` also ``true`` or ``false``) or a distribution
    ``{option: probability}`` over every option of the question (soft gold, e.g. several annotators).
    """

    gold: Annotated[dict[str, GoldAnswer], msgspec.Meta(
        description="Per question: the right option, or a probability for every option.")] = msgspec.field(
        default_factory=dict)

    def findings(self) -> Iterator[Finding]:
        yield from super().findings()
        for name in self.gold:
            if name not in self.questions:
                hint = (f"give gold answers for the row's questions: {', '.join(self.questions)}" if self.questions
                        else f'the row asks no questions: add "{name}" to its "questions", or remove its gold answer')
                yield Finding(("gold", name), f'no question "{name}" in this row', hint, code="unknown-question")


class QuestionAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The answer to one question: a probability for every option, or why there is none."""

    probabilities: dict[str, float] | None = None
    expected: Annotated[float, msgspec.Meta(
        description="score: the expected value, Σ probability × level value.")] | None = None
    error: str | None = None


class DecisionResult(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One result per row, matched to it by ``id``; ``error`` is set when the whole row failed."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    answers: dict[str, QuestionAnswer] = msgspec.field(default_factory=dict)
    latency_s: NonNegative = 0.0
    usage: Usage = msgspec.field(default_factory=Usage)
    error: str | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """Whether the row, or any of its questions, failed (what progress counts as an error)."""
        return self.error is not None or any(answer.error for answer in self.answers.values())


class DecisionConfig(RunConfig, kw_only=True):
    """How a decision method is asked to run: a `RunConfig` whose language pair is optional."""

    source_lang: LanguageCode | None = None  # type: ignore[assignment]
    target_lang: LanguageCode | None = None  # type: ignore[assignment]

    @property
    def pair(self) -> str:
        return f"{self.source_lang}>{self.target_lang}" if self.source_lang and self.target_lang else ""


def rows_problem(rows: Any, where: str = "rows") -> str | None:
    """Why ``rows`` cannot be sent to ``decide`` (None when they can): each a `DecisionRow` as its schema and rules
    say, ids unique; in the words of the Node side's ``rowsProblem`` (bridge/node/lib/decision-rows.js)."""
    from mt_eval.strict import decode_value
    from mt_eval.value_words import value_in_words

    if not isinstance(rows, list):
        return f"{where} must be a list of rows, got {value_in_words(rows)}"
    seen: set[str] = set()
    for i, row in enumerate(rows):
        try:
            msgspec.convert(row, DecisionRow)  # the usual row, at msgspec's speed (its rules run in __post_init__)
        except (msgspec.ValidationError, ValueError) as exc:
            _value, problems = decode_value(row, DecisionRow, file=where)  # the first problem, in words
            first = next((p for p in problems if p.severity == "error"), None)
            return f"{where}[{i}]{first.path.removeprefix('$')}: {first.message}" if first else f"{where}[{i}]: {exc}"
        if row["id"] in seen:
            return f"{where}[{i}].id: {js_string(row['id'])} appears twice"
        seen.add(row["id"])
    return None
