"""Whether a run may have a headline or be published, as far as contamination goes.

The headline gate's ``contamination`` rule (`mt_eval.harness.gate`, and so publishing) calls
`require_clean(card["contamination"], policy)` with its gate policy's ``contamination`` (the shipped gate policy:
"not-contaminated"):

* ``"verified-clean"`` (this function's default): the check ran, found nothing, and its planted control's recall
  reached its floor — status "clean";
* ``"not-contaminated"``: anything but "contaminated" passes, a check that was not run or is unverified
  included (for internal leaderboards that accept unchecked runs);
* ``"off"``: no requirement.

A card without a ``contamination`` record (written before the check existed) fails every policy but "off".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

POLICIES = ("verified-clean", "not-contaminated", "off")


class PolicyResult(NamedTuple):
    passed: bool
    reasons: list[str]


def require_clean(record: Any, policy: str = "verified-clean") -> PolicyResult:
    """Check a ``contamination`` record (a `ContaminationRecord`, or the dict a card's JSON decodes to)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown contamination policy {policy!r}: choose one of {', '.join(POLICIES)}")
    if policy == "off":
        return PolicyResult(True, [])
    if record is None:
        return PolicyResult(False, ["the card has no contamination record (it predates the check)"])
    fields: Mapping[str, Any] = record if isinstance(record, Mapping) else {
        name: getattr(record, name, None) for name in ("status", "reasons", "hits_total", "recall", "recall_floor")}
    status = fields.get("status")
    why = "; ".join(fields.get("reasons") or [])
    if status == "contaminated":
        return PolicyResult(False, [f"the bundle contains evaluation data ({why or 'hits recorded'})"])
    if policy == "not-contaminated":
        return PolicyResult(True, [])
    if status != "clean":
        return PolicyResult(False, [f"the contamination check is {status or 'missing'}" + (f": {why}" if why else "")])
    recall, floor = fields.get("recall"), fields.get("recall_floor")
    if recall is None or floor is None or recall < floor:
        return PolicyResult(False, [f"the planted control's recall ({recall}) does not reach its floor ({floor})"])
    return PolicyResult(True, [])
