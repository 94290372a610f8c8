"""What flows through ``translate``: corpus entries in, results out, under a `RunConfig`.

Entries reach a method as plain dicts (extra corpus fields untouched); `CorpusEntry` is the shape
they are guaranteed to have. A method returns one result dict per entry, shaped as `TranslationResult`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import msgspec

from mt_eval.field_words import described
from mt_eval.js_text import SAFE_INTEGER
from mt_eval.json_input import MAX_DEPTH
from mt_eval.lone_surrogates import MESSAGE_LIMIT, capped
from mt_eval.strict import StrictStruct

LanguageCode = Annotated[str, described(
    pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$",
    description='ISO 639 language code, optionally with subtags, e.g. "eng", "es", "pt-BR".',
    pattern_means="a language code", hint='use an ISO 639 code such as "eng" or "es"')]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class CorpusEntry(msgspec.Struct, kw_only=True):
    """One segment to translate. Extra fields (domain, context, ...) are kept and passed on."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    source: str
    reference: str | None = None
    family: Annotated[Literal["scored", "canary", "negative"], msgspec.Meta(
        description="scored (the default) entries make the metrics; a canary must pass its pass_rule; a negative "
                    "control must be refused or abstained on. The method never sees this field.")] | None = None
    pass_rule: Annotated[str, msgspec.Meta(
        description='A canary\'s pass rule: "exact" or "chrf>=N" (N from 0 to 100).')] | None = None
    pair: Annotated[str, msgspec.Meta(
        description='A negative control translated in another pair than the run\'s, e.g. "eng>deu".')] | None = None


class Usage(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Tokens a method spent on one entry (zeros for methods without a model)."""

    prompt_tokens: Annotated[int, msgspec.Meta(ge=0, le=SAFE_INTEGER)] = 0
    completion_tokens: Annotated[int, msgspec.Meta(ge=0, le=SAFE_INTEGER)] = 0
    total_tokens: Annotated[int, msgspec.Meta(
        ge=0, le=SAFE_INTEGER, description="As an OpenAI-compatible response reports it (may include more than "
                                           "prompt and completion); null when not reported.")] | None = None


class TranslationResult(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One result per entry, matched to it by ``id``. ``error`` is set when the entry failed.

    What a method returns becomes results in one place, `mt_eval.results`, which also applies the one
    cross-field rule (`result_problem`) and accepts results written for the upstream harness.
    """

    id: Annotated[str, msgspec.Meta(min_length=1)]
    predicted: str | None = None
    latency_s: NonNegative = 0.0
    usage: Usage = msgspec.field(default_factory=Usage)
    error: str | None = None
    tool_calls: list[dict[str, Any]] = msgspec.field(default_factory=list)
    tool_call_count: Annotated[int, msgspec.Meta(ge=0, le=SAFE_INTEGER)] = 0
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    raw_predicted: Annotated[str, msgspec.Meta(
        description="The method's output before its own post-processing (kept as the upstream harness does).")
    ] | None = None
    cached: Annotated[bool, msgspec.Meta(
        description="Whether the method served this result from its cache.")] | None = None
    abstained: Annotated[bool, msgspec.Meta(
        description="The method declines to translate this entry (an unsupported pair, an empty or garbage "
                    "source, a missing resource); abstain_reason says why. Not an error.")] = False
    abstain_reason: Annotated[str, msgspec.Meta(
        min_length=1, description="Why the method abstained (required when abstained is true).")] | None = None


# Fields a method may have meant as "predicted" (an unknown field is moved into metadata before the result is checked).
PREDICTED_LOOKALIKES = ("translation", "text", "output", "target", "prediction")


def predicted_lookalike(metadata: dict[str, Any]) -> str:
    """``; it has "translation": did you mean "predicted"?`` when a result without "predicted" holds a likely
    misnaming of it; "" otherwise."""
    name = next((name for name in PREDICTED_LOOKALIKES if isinstance(metadata.get(name), str)), None)
    return "" if name is None else f'; it has "{name}": did you mean "predicted"?'


def result_problem(result: TranslationResult) -> str | None:
    """Why a result is unusable (None when it is fine): the rule across its fields, and a latency that is not a
    finite number (the schema's ``>= 0`` lets Infinity through, and JSON would write it as null)."""
    if not math.isfinite(result.latency_s):
        shown = "NaN" if result.latency_s != result.latency_s else "Infinity" if result.latency_s > 0 else "-Infinity"
        return f"$.latency_s: must be a finite number, got {shown}"
    if result.abstained:
        if not result.abstain_reason:
            return 'an abstained result needs "abstain_reason" saying why'
        if result.predicted is not None or result.error is not None:
            return 'an abstained result has neither "predicted" nor "error"'
    elif result.abstain_reason is not None:
        return '"abstain_reason" is given but "abstained" is not true'
    elif result.predicted is None and result.error is None:
        return 'a result needs "predicted" or, when the entry failed, "error"' + predicted_lookalike(result.metadata)
    if result.tool_call_count < len(result.tool_calls):
        return f"tool_call_count is {result.tool_call_count} but {len(result.tool_calls)} tool calls are listed"
    return None


class NotJson(Exception):
    """A returned result holds a value JSON cannot (`plain_fields`); the message names the field and why."""


def plain_fields(item: dict[Any, Any]) -> dict[Any, Any]:
    """A returned result's fields as plain JSON values (`plain_json`), or NotJson naming a field JSON cannot hold."""
    plain = {}
    for name, value in item.items():
        problem = not_json(value)
        if problem is None:
            try:
                plain[name] = msgspec.to_builtins(value, builtin_types=(bytes, bytearray, memoryview),
                                                  enc_hook=plain_json)
            except TypeError as exc:
                problem = str(exc)
        if problem is not None:
            raise NotJson(f'"{name}" cannot be sent as JSON: {problem}')
    return plain


def not_json(value: Any, ancestors: list[Any] | None = None) -> str | None:
    """Why a returned value cannot be written as JSON, checked before anything walks it: it refers to itself (a
    response object kept in metadata often does) or nests deeper than `MAX_DEPTH`; None when it can be. Node's
    ``notJson`` (lib/results.js) says it in the same words."""
    if not isinstance(value, dict | list):
        return None
    ancestors = [] if ancestors is None else ancestors
    if any(value is seen for seen in ancestors):
        return "it refers to itself (a circular structure)"
    if len(ancestors) >= MAX_DEPTH:
        return f"it nests deeper than {MAX_DEPTH} levels"
    ancestors.append(value)
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, dict | list) and (problem := not_json(item, ancestors)) is not None:
            ancestors.pop()
            return problem
    ancestors.pop()
    return None


def plain_json(value: Any) -> Any:
    """The ``enc_hook`` that turns what a method returned into plain JSON values (`msgspec.to_builtins`): a str
    subclass (numpy's ``str_``) as its text, a numpy number or array as the Python value it holds; anything else JSON
    cannot hold raises TypeError naming its type."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int | float):
        return float(value) if isinstance(value, float) else int(value)
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"it holds an object of type {type(value).__qualname__} (give text, numbers, booleans, null, "
                    "lists or objects)")


def with_capped_error(result: TranslationResult) -> TranslationResult:
    """``result`` with the error its method gave it `mt_eval.lone_surrogates.capped` (a whole response, say)."""
    if result.error is not None and len(result.error) > MESSAGE_LIMIT:
        result.error = capped(result.error)
    return result


class RunConfig(StrictStruct, kw_only=True, omit_defaults=False):
    """How a method is asked to run: the language pair, the model settings, and method parameters."""

    source_lang: LanguageCode
    target_lang: LanguageCode
    model: str | None = None
    base_url: Annotated[str, msgspec.Meta(
        description="OpenAI-compatible endpoint for methods with a gateway dependency.")] | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=SAFE_INTEGER)] | None = None
    batch_size: Annotated[int, msgspec.Meta(ge=1, le=SAFE_INTEGER)] = 16
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=SAFE_INTEGER)] = 8
    timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 120.0
    seed: Annotated[int, msgspec.Meta(ge=-SAFE_INTEGER, le=SAFE_INTEGER)] | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def pair(self) -> str:
        return f"{self.source_lang}>{self.target_lang}"
