"""The decision card: what one ``mt-eval decide run`` measured, and how to reproduce it.

Every number in it comes from the run it names: the metrics and the scorer self-check carry ``produced_by``
(the run id and the SHA-256 of the results they were computed from), and ``content_sha256`` seals the card as
the run card's does (`mt_eval.harness.runcard.seal`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from mt_eval.decisions.metrics import DecisionMetrics
from mt_eval.decisions.records import DecisionResult
from mt_eval.decisions.selfcheck import SelfCheck
from mt_eval.harness.environment import Environment
from mt_eval.harness.latency import LatencyFacts
from mt_eval.harness.runcard import MethodFacts, UsageTotals

CARD_VERSION = "decision-card/1"


class Provenance(msgspec.Struct, kw_only=True):
    """Which run produced a number: its id and the SHA-256 of the results (one JSON line per row, in corpus
    order) it was computed from."""

    run_id: str
    results_sha256: str


class DecisionCorpusFacts(msgspec.Struct, kw_only=True):
    name: str
    path: str
    sha256: str
    rows: int
    questions: dict[str, int]
    gold_questions: int
    license: str | None = None


class DecisionSettings(msgspec.Struct, kw_only=True):
    batch_size: int
    concurrency: int
    timeout_s: float
    tolerance: float
    max_input_chars: int | None
    question_types: list[str]


class Coverage(msgspec.Struct, kw_only=True):
    """How many questions were asked, answered, failed, and scored (answered and with gold), per type."""

    asked: int
    answered: int
    failed: int
    scored: int


class DecisionFailure(msgspec.Struct, kw_only=True):
    """One distinct row or question error of a decision run: how many carry it, the first of them, and the question
    it belongs to (none for a row's own error)."""

    message: str
    count: int
    example_id: str
    question: str | None = None


class DecisionCard(msgspec.Struct, kw_only=True):
    card_version: str = CARD_VERSION
    run_id: str
    started_at: str
    finished_at: str
    sessions: int
    sdk_version: str
    method: MethodFacts
    corpus: DecisionCorpusFacts
    config: dict[str, Any]
    settings: DecisionSettings
    self_check: SelfCheck
    self_check_produced_by: Provenance
    metrics: DecisionMetrics | None
    metrics_produced_by: Provenance | None
    coverage: dict[str, Coverage]
    rows_over_limit: int
    failures: list[DecisionFailure]
    environment: Environment
    latency: LatencyFacts
    usage: UsageTotals
    errors: int
    results: list[DecisionResult]
    content_sha256: str = ""


def results_sha256(results: list[DecisionResult]) -> str:
    """SHA-256 of the results as canonical JSON lines (sorted keys), in the order given."""
    digest = hashlib.sha256()
    for result in results:
        digest.update(msgspec.json.encode(msgspec.to_builtins(result), order="sorted") + b"\n")
    return digest.hexdigest()
