"""What flows through ``translate``: corpus entries in, results out, under a `RunConfig`.

Entries reach a method as plain dicts (extra corpus fields untouched); `CorpusEntry` is the shape
they are guaranteed to have. A method returns one result dict per entry, shaped as `TranslationResult`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import msgspec

from mt_eval.problems import Finding
from mt_eval.strict import StrictStruct

LanguageCode = Annotated[str, msgspec.Meta(
    pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$",
    description='ISO 639 language code, optionally with subtags, e.g. "eng", "es", "pt-BR".',
    extra={"pattern_means": "a language code", "hint": 'use an ISO 639 code such as "eng" or "es"'},
)]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class CorpusEntry(msgspec.Struct, kw_only=True):
    """One segment to translate. Extra fields (domain, context, ...) are kept and passed on."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    source: str
    reference: str | None = None


class Usage(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Tokens a method spent on one entry (zeros for methods without a model)."""

    prompt_tokens: Annotated[int, msgspec.Meta(ge=0)] = 0
    completion_tokens: Annotated[int, msgspec.Meta(ge=0)] = 0


class TranslationResult(StrictStruct, kw_only=True, omit_defaults=False):
    """One result per entry, matched to it by ``id``. ``error`` is set when the entry failed."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    predicted: str | None = None
    latency_s: NonNegative = 0.0
    usage: Usage = msgspec.field(default_factory=Usage)
    error: str | None = None
    tool_calls: list[dict[str, Any]] = msgspec.field(default_factory=list)
    tool_call_count: Annotated[int, msgspec.Meta(ge=0)] = 0
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)

    def findings(self) -> Iterator[Finding]:
        if self.predicted is None and self.error is None:
            yield Finding(("predicted",), 'a result needs "predicted" or, when the entry failed, "error"',
                          'set "predicted" to the translation, or "error" to what went wrong', code="empty-result")
        if self.tool_calls and self.tool_call_count < len(self.tool_calls):
            yield Finding(("tool_call_count",), f"is {self.tool_call_count} but {len(self.tool_calls)} tool calls "
                          "are listed", "count every tool call", code="contradiction")


class RunConfig(StrictStruct, kw_only=True, omit_defaults=False):
    """How a method is asked to run: the language pair, the model settings, and method parameters."""

    source_lang: LanguageCode
    target_lang: LanguageCode
    model: str | None = None
    base_url: Annotated[str, msgspec.Meta(
        description="OpenAI-compatible endpoint for methods with a gateway dependency.")] | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    max_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    batch_size: Annotated[int, msgspec.Meta(ge=1)] = 16
    concurrency: Annotated[int, msgspec.Meta(ge=1)] = 8
    timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 120.0
    seed: int | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def pair(self) -> str:
        return f"{self.source_lang}>{self.target_lang}"
