"""The run card: everything a run measured and everything needed to reproduce or compare it.

Every number in a card comes from the run it describes. ``content_sha256`` is the SHA-256 of the card's
canonical JSON (sorted keys, no whitespace) with ``content_sha256`` itself left out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from mt_eval.code_hash import code_sha256, git_state
from mt_eval.contamination.record import ContaminationRecord
from mt_eval.dependency_classes import DependencyClass
from mt_eval.eligibility import Eligibility
from mt_eval.gateway.audit import GatewayFacts
from mt_eval.harness.environment import Environment
from mt_eval.harness.families import FamilyFacts
from mt_eval.harness.freeze import FreezeReference
from mt_eval.harness.latency import LatencyFacts
from mt_eval.harness.scoring import Scores
from mt_eval.pins import PinCheck
from mt_eval.records import TranslationResult
from mt_eval.sandbox.policy import SandboxFacts
from mt_eval.scan.findings import ScanReport

CARD_VERSION = "run-card/1"
__all__ = ["RunCard", "code_sha256", "git_state", "seal"]

# Counts a run writes: a card that states another (a negative number of errors or tokens, no session) is not one
# a run wrote, and `mt-eval verify` names it.
Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class DependencyContribution(msgspec.Struct, kw_only=True):
    path: str
    id: str
    dependency_class: DependencyClass
    reason: str


class MethodFacts(msgspec.Struct, kw_only=True):
    method_id: str
    name: str
    method_class: str = msgspec.field(name="class")
    card: dict[str, Any]
    dependency_class: DependencyClass | None
    contributions: list[DependencyContribution]
    runtime: str
    code_sha256: str
    git_commit: str | None = None
    git_dirty: bool | None = None
    guest_restarts: int | None = None
    champollion: dict[str, Any] | None = None


class CorpusFileFacts(msgspec.Struct, kw_only=True):
    role: str  # corpus | source | reference
    path: str
    sha256: str
    lines: int | None = None


class CorpusReading(msgspec.Struct, kw_only=True):
    """How the corpus file was read, so that anyone can read it the same way again."""

    format: str  # json | jsonl | tsv | parallel
    columns: list[str] | None = None  # TSV: the field each column filled, in order
    columns_from: str | None = None  # TSV: header | convention | --columns
    header_line: int | None = None
    ids_from: str = "field"  # field | line numbers | positions
    aliases: dict[str, str] = msgspec.field(default_factory=dict)  # field or header name -> the field it filled
    comment_lines: int = 0
    references: bool = True  # False: translation only, no metrics
    files: list[CorpusFileFacts] = msgspec.field(default_factory=list)
    accepted_doubts: list[str] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)


class CorpusFacts(msgspec.Struct, kw_only=True):
    name: str
    path: str
    sha256: str  # the whole file's (parallel text: over both files' sha256, see mt_eval.corpus.parallel)
    entries: Count  # in the whole corpus; a selection's own count is in RunCard.selection
    pair: str
    license: str | None = None
    reading: CorpusReading | None = None


class SelectionFacts(msgspec.Struct, kw_only=True):
    """The part of the corpus a run covered (``--ids``, ``--segment``, ``--limit``)."""

    ids: list[str | int] | None = None
    ranges: list[str] | None = None
    segment: list[str] | None = None
    limit: Positive | None = None
    entries_in_corpus: Count
    entries_selected: Count
    subset_sha256: str  # SHA-256 of the selected entries, canonical JSON one per line


class CardResult(TranslationResult, kw_only=True):
    """A result as the card lists it: under the entry's id as the corpus gave it (an integer stays one).

    Only the card widens the id's type: on the wire and in ``results.jsonl`` ids are text."""

    id: str | int  # type: ignore[assignment]


class ResultsLogReference(msgspec.Struct, kw_only=True):
    """Where the results of a card that does not embed them are: its run's ``results.jsonl``, by SHA-256.

    A card of many results (over `EMBED_UP_TO`, or ``mt-eval run --embed-results never``) lists none itself;
    its content hash covers this reference, so the card and the log it names verify as one."""

    file: str  # next to the card, as the run wrote it: "results.jsonl"
    sha256: str  # of the log's bytes when the card was sealed
    results: Count  # results in the log (one per entry; the card's tallies count them)


EMBED_UP_TO = 100_000  # results a card embeds by default; a larger run's card references its log


class Covariates(msgspec.Struct, kw_only=True):
    model: str | None
    temperature: float | None
    max_tokens: Positive | None
    seed: Count | None
    batch_size: Positive
    concurrency: Positive
    timeout_s: Annotated[float, msgspec.Meta(gt=0)]
    retries_per_entry: Count
    retry_budget: Count
    retries_used: Count
    # absent from older cards (mt_eval.harness.covariates): what the method may reach at run time (its
    # gateway and external-API dependencies; [] for none), and the covariates that do not apply, with why
    tool_permissions: list[str] | None = None
    not_applicable: dict[str, str] | None = None
    # the --param values the method got (RunConfig.params; {} for none); absent from older cards
    params: dict[str, Any] | None = None


class UsageTotals(msgspec.Struct, kw_only=True):
    prompt_tokens: Count
    completion_tokens: Count
    total_tokens: Count | None = None  # the sum of the results' usage.total_tokens; null when none reports it


Status = Literal["complete", "partial", "failed"]


class Failure(msgspec.Struct, kw_only=True):
    """One distinct error message of a run: how many entries carry it, and the first of them."""

    message: str
    count: Positive
    example_id: str


class GateCheck(msgspec.Struct, kw_only=True):
    rule: str
    passed: bool
    figure: str  # what the card says
    threshold: str  # what the policy asks
    details: list[str] = msgspec.field(default_factory=list)  # why the rule failed, one line each
    notes: list[str] = msgspec.field(default_factory=list)  # what the figure is made of (e.g. each covariate)


class GateFacts(msgspec.Struct, kw_only=True):
    """The gate's verdict as a card records it: the policy (name, SHA-256 and thresholds) and every rule."""

    passed: bool
    policy: str
    failures: list[str] = msgspec.field(default_factory=list)  # one line per rule that failed
    policy_sha256: str | None = None
    thresholds: dict[str, Any] | None = None
    checks: list[GateCheck] = msgspec.field(default_factory=list)


class RunCard(msgspec.Struct, kw_only=True):
    """A finished (or resumed-to-completion) run of one method on one corpus."""

    card_version: str = CARD_VERSION
    run_id: str
    started_at: str
    finished_at: str
    sessions: Positive
    sdk_version: str
    method: MethodFacts
    corpus: CorpusFacts
    covariates: Covariates
    environment: Environment
    metrics: Scores | None
    latency: LatencyFacts
    usage: UsageTotals
    errors: Count
    # how the run ended (absent from older cards: unknown). A failed run has no metrics.
    status: Status | None = None
    failures: list[Failure] | None = None
    # (decoded as a list; a card that references its log has them read from it: `card_results.ResultsOnDisk`)
    results: Sequence[CardResult]
    selection: SelectionFacts | None = None  # None: the whole corpus ran
    # Fair by construction (mt_eval.harness.fairness); absent on older cards, null when not done.
    static_scan: ScanReport | None = None
    sandbox: SandboxFacts | None = None
    gateway: GatewayFacts | None = None
    eligibility: Eligibility | None = None
    contamination: ContaminationRecord | None = None  # mt_eval.contamination.run_check
    # How the method's results were accepted (mt_eval.results), and its pins as checked before the run.
    cached: Count | None = None  # results the method served from its cache; null when it does not say
    normalised: dict[str, int] = msgspec.field(default_factory=dict)  # what was changed to accept results: count
    pins: list[PinCheck] = msgspec.field(default_factory=list)  # each mirrored dependency's pin, as checked
    # Measurement rigor; absent from older cards. The corpus families and their rates
    # (mt_eval.harness.families), the headline gate's verdict (mt_eval.harness.gate) and the freeze
    # manifest the run was held to (mt_eval.harness.freeze).
    families: FamilyFacts | None = None
    gate: GateFacts | None = None
    freeze: FreezeReference | None = None
    # Results referenced rather than embedded (`results` is then empty); absent or null: `results` holds them.
    results_log: ResultsLogReference | None = None
    content_sha256: str = ""


Sealable = TypeVar("Sealable", bound=msgspec.Struct)


def seal(card: Sealable) -> Sealable:
    """The card (a run card, or any card Struct with ``content_sha256``) with ``content_sha256`` set."""
    card.content_sha256 = ""  # type: ignore[attr-defined]
    body = msgspec.to_builtins(card)
    body.pop("content_sha256", None)
    card.content_sha256 = hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()  # type: ignore[attr-defined]
    return card
