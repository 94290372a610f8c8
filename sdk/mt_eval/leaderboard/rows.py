"""What a leaderboard row shows, built once from a verified run card when it is published.

A row carries the method (class badge, dependency class, name, tools used, open-source mark), the headline
(metric, score, interval, denominator), what the harness itself recorded (model, temperature, version, tools
called — shown when the run had no method card), and the eligibility facts the card holds: ``status``,
``eligibility``, ``sandbox``, ``gate`` and ``contamination``. A field the card does not have is unknown, and
the board says so; it is never guessed.
"""

from __future__ import annotations

import hashlib
from operator import attrgetter
from typing import Any

import msgspec

from mt_eval.corpus.model import entry_key
from mt_eval.harness.runcard import RunCard

# The card fields method.json supplies (`mt_eval.method_card.card_from_manifest`): a run card whose method card has
# nothing else was run without a method card.
MANIFEST_FIELDS = frozenset({"method_id", "name", "class", "version", "description", "author", "supported_pairs",
                             "dependency_class"})
# What the publish wizard insists on when there is no method card.
WIZARD_FIELDS = ("description", "paradigm", "open_source")


class Headline(msgspec.Struct, kw_only=True):
    metric: str
    score: float
    ci_low: float | None
    ci_high: float | None
    higher_is_better: bool
    denominator: int  # scored entries


class Eligibility(msgspec.Struct, kw_only=True):
    """The card's own eligibility facts; None means the card does not record it (unknown)."""

    status: str | None = None
    eligible: bool | None = None
    reasons: list[str] = msgspec.field(default_factory=list)
    flags: list[str] = msgspec.field(default_factory=list)
    sandboxed: bool | None = None
    sandbox: str | None = None
    gate_passed: bool | None = None
    # the policy the board gated the card under, "NAME (sha256 PREFIX)"; None: a row stored before it was kept
    gate_policy: str | None = None
    contamination: str | None = None


class Row(msgspec.Struct, kw_only=True):
    key: str  # the first 16 hex digits of the card's content hash: names its detail page
    run_id: str
    finished_at: str
    method_id: str
    method_name: str
    method_class: str
    dependency_class: str | None
    description: str | None = None
    paradigm: str | None = None
    tools_used: list[str] = msgspec.field(default_factory=list)
    open_source: bool | None = None
    open_source_url: str | None = None
    has_method_card: bool
    method_card_source: str
    method_card: dict[str, Any]
    settings: dict[str, Any]
    pair: str
    corpus_name: str
    corpus_sha256: str
    corpus_size: int | None  # entries in the corpus file; more than the run's entries when it was truncated
    headline: Headline | None
    signatures: dict[str, str]
    eligibility: Eligibility
    hardware: str
    hot_p95_s: float | None
    ranking_key: str
    entries_run: int | None = None  # entries the run has results for (the denominator counts scored ones only)
    # how the card's intervals were drawn (`intervals_drawn`); None: no metrics, or a row stored before it was kept
    intervals: dict[str, Any] | None = None


def has_method_card(card: dict[str, Any]) -> bool:
    """Whether a run's card says more than method.json does (a method_card.json, method_card() or a file)."""
    return not MANIFEST_FIELDS.issuperset(card)


def missing_card_fields(card: dict[str, Any]) -> list[str]:
    """The fields of `WIZARD_FIELDS` a card lacks (``paradigm`` "unknown" counts as missing)."""
    return [f for f in WIZARD_FIELDS if card.get(f) in (None, "", "unknown")]


def ranking_key(card: RunCard, corpus_size: int | None) -> str:
    """Rows are ranked together only when this is equal: the same corpus sha256, the same entries of it, and
    the same headline metric with the same sacrebleu signatures."""
    whole = corpus_size is not None and corpus_size == len(card.results)
    subset = "" if whole else "\n".join(sorted(entry_key(r.id) for r in card.results))
    parts = [card.corpus.sha256, hashlib.sha256(subset.encode()).hexdigest() if subset else "whole"]
    if card.metrics is not None:
        parts.append(card.metrics.headline)
        parts += sorted(f"{m.name}={m.signature}" for m in card.metrics.metrics
                        if not m.signature.startswith("extension:"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def build_row(data: dict[str, Any], card: RunCard, method_card: dict[str, Any], source: str,
              corpus_size: int | None) -> Row:
    """The row of a verified card (``data`` as parsed, ``card`` decoded) with the method card it is shown with."""
    headline = None
    if card.metrics is not None:
        chosen = next((m for m in card.metrics.metrics if m.name == card.metrics.headline), None)
        if chosen is not None:
            headline = Headline(metric=chosen.name, score=chosen.score, ci_low=chosen.ci_low, ci_high=chosen.ci_high,
                                higher_is_better=chosen.higher_is_better, denominator=card.metrics.segments)
    return Row(
        key=card.content_sha256[:16], run_id=card.run_id, finished_at=card.finished_at,
        method_id=card.method.method_id, method_name=str(method_card.get("name") or card.method.name),
        method_class=card.method.method_class, dependency_class=card.method.dependency_class,
        description=method_card.get("description"), paradigm=method_card.get("paradigm"),
        tools_used=list(method_card.get("tools_used") or []), open_source=method_card.get("open_source"),
        open_source_url=method_card.get("open_source_url"),
        has_method_card=has_method_card(method_card), method_card_source=source, method_card=method_card,
        settings=native_settings(card), pair=card.corpus.pair, corpus_name=card.corpus.name,
        corpus_sha256=card.corpus.sha256, corpus_size=corpus_size, headline=headline,
        signatures={m.name: m.signature for m in card.metrics.metrics} if card.metrics else {},
        eligibility=eligibility(data), hardware=card.environment.hardware, hot_p95_s=card.latency.hot_p95_s,
        ranking_key=ranking_key(card, corpus_size), entries_run=len(card.results), intervals=intervals_drawn(card))


def intervals_drawn(card: RunCard) -> dict[str, Any] | None:
    """How the card's 95% intervals were drawn: the bootstrap (``fast`` or ``upstream``), its resamples, seed and
    confidence. Rows ranked by overlapping intervals are ranked alike only when drawn alike (`mt_eval.leaderboard
    .board`); None for a card without metrics."""
    if card.metrics is None:
        return None
    return {"bootstrap": card.metrics.bootstrap, "resamples": card.metrics.bootstrap_resamples,
            "seed": card.metrics.bootstrap_seed, "confidence": card.metrics.confidence}


def native_settings(card: RunCard) -> dict[str, Any]:
    """What the harness recorded about how the method ran, whatever its card says."""
    called: set[str] = set()
    count = sum(map(attrgetter("tool_call_count"), card.results))
    for result in filter(attrgetter("tool_calls"), card.results):  # (most call no tool: passed over in C)
        for call in result.tool_calls:
            called.add(str(call.get("name") or call.get("tool") or (call.get("function") or {}).get("name") or "?"))
    return {"model": card.covariates.model, "temperature": card.covariates.temperature,
            "version": card.method.card.get("version"), "tools_called": sorted(called), "tool_calls": count}


def eligibility(data: dict[str, Any]) -> Eligibility:
    """The eligibility facts of a card as parsed (fields other parts of the SDK write; absent means unknown)."""
    facts = Eligibility(status=_text(data.get("status")))
    recorded = data.get("eligibility")
    if isinstance(recorded, dict):
        facts.eligible = recorded.get("eligible") if isinstance(recorded.get("eligible"), bool) else None
        facts.reasons = [str(r) for r in recorded.get("reasons") or []]
        facts.flags = [str(f) for f in recorded.get("flags") or []]
    if "sandbox" in data:
        sandbox = data["sandbox"]
        facts.sandboxed = isinstance(sandbox, dict)
        facts.sandbox = (" ".join(str(sandbox[k]) for k in ("tool", "version") if sandbox.get(k))
                         or "sandboxed") if isinstance(sandbox, dict) else "not sandboxed"
    gate = data.get("gate")
    if isinstance(gate, dict) and isinstance(gate.get("passed"), bool):
        facts.gate_passed = gate["passed"]
    contamination = data.get("contamination")
    if isinstance(contamination, dict):
        facts.contamination = _text(contamination.get("status"))
    return facts


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def build_record(row: Row, content_sha256: str, card_json: bytes) -> dict[str, Any]:
    """The store's columns for a row (``published_at`` is added by the store). The JSON columns are the
    encoders' UTF-8 bytes, made text by the store as it writes them (`mt_eval.leaderboard.store.Store.publish`):
    a record prepared in a worker process crosses to the store as bytes, not decoded and encoded again."""
    return {"content_sha256": content_sha256, "run_id": row.run_id, "finished_at": row.finished_at,
            "method_id": row.method_id, "method_class": row.method_class, "dependency_class": row.dependency_class,
            "pair": row.pair, "corpus_name": row.corpus_name, "corpus_sha256": row.corpus_sha256,
            "ranking_key": row.ranking_key, "headline_score": row.headline.score if row.headline else None,
            "row_json": msgspec.json.encode(row), "card_json": card_json}
