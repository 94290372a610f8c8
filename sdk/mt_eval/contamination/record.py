"""The run card's ``contamination`` record: what the check of the evaluated bundle found, or why it did
not run. Light on purpose (msgspec only): the run card imports it."""

from __future__ import annotations

import msgspec

from mt_eval.contamination.report import CorpusSummary, Finding, Hit, Planted, Report, Status
from mt_eval.contamination.settings import CheckSettings

RECORDED_HITS = 50


class ContaminationRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``status`` is "clean" (no hits, and the planted control's ``recall`` reached ``recall_floor``),
    "contaminated" (``hits_total`` hits; the first 50 in ``hits``), "unverified" (no hits, but ``reasons``
    say why that proves nothing) or "not-run" (``reasons`` say why). ``seed`` and ``planted`` reproduce
    the control; ``unread`` lists files the check could not fully read."""

    status: Status
    reasons: list[str] = msgspec.field(default_factory=list)
    hits_total: int = 0
    hits: list[Hit] = msgspec.field(default_factory=list)
    recall: float | None = None
    recall_floor: float | None = None
    seed: int | None = None
    planted: list[Planted] = msgspec.field(default_factory=list)
    corpora: list[CorpusSummary] = msgspec.field(default_factory=list)
    settings: CheckSettings | None = None
    unread: list[Finding] = msgspec.field(default_factory=list)
    seconds: float | None = None


def record_of(report: Report) -> ContaminationRecord:
    control = report.control
    return ContaminationRecord(
        status=report.status, reasons=report.reasons, hits_total=len(report.hits),
        hits=report.hits[:RECORDED_HITS], recall=control.recall if control else None,
        recall_floor=report.settings.recall_floor, seed=control.seed if control else None,
        planted=control.planted if control else [], corpora=report.corpora, settings=report.settings,
        unread=[f for f in report.findings if f.effect == "unverified"][:RECORDED_HITS], seconds=report.seconds)


def not_run(reason: str) -> ContaminationRecord:
    return ContaminationRecord(status="not-run", reasons=[reason])
