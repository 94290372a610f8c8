"""What a run's results say about each corpus family (`mt_eval.corpus.families`): the card's record.

- a canary passes when its result's prediction satisfies its own pass rule; one that fails, errs, abstains
  or has no result does not pass;
- a negative control holds when its result abstains (``abstained: true`` with an ``abstain_reason``) or
  fails with an ``error`` (a refusal); a prediction — any prediction, even an empty one — violates it;
- the abstention rate counts the scored entries the method abstained on.

Every figure is a count over a stated denominator (`Ratio`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from mt_eval.corpus.families import FAMILIES, PassRule, quoted
from mt_eval.harness.logged_results import pairs
from mt_eval.records import TranslationResult

if TYPE_CHECKING:
    from mt_eval.harness.logged_results import LoggedResults


class Ratio(msgspec.Struct, kw_only=True):
    """A figure as numerator/denominator; ``rate`` is None when the denominator is 0."""

    numerator: int
    denominator: int

    @property
    def rate(self) -> float | None:
        return None if self.denominator == 0 else self.numerator / self.denominator

    def __str__(self) -> str:
        rate = self.rate
        return f"{self.numerator}/{self.denominator}" + ("" if rate is None else f" ({rate * 100:.1f}%)")


class CanaryOutcome(msgspec.Struct, kw_only=True):
    id: str
    rule: str
    passed: bool
    detail: str


class NegativeOutcome(msgspec.Struct, kw_only=True):
    id: str
    outcome: Literal["abstained", "refused", "violated", "no result"]
    detail: str


class FamilyFacts(msgspec.Struct, kw_only=True):
    """The card's family record: entries of each family in the run and every rate as numerator/denominator."""

    scored: int
    canary: int
    negative: int
    canary_pass_rate: Ratio  # canaries that passed their rule / canaries
    negative_violation_rate: Ratio  # negative controls translated / negative controls
    abstention_rate: Ratio  # scored entries abstained on / scored entries
    scored_errors: Ratio  # scored entries that failed / scored entries
    canaries: list[CanaryOutcome]
    negatives: list[NegativeOutcome]


def tally(entries: Sequence[Mapping[str, Any]], results: Mapping[str, TranslationResult] | LoggedResults
          ) -> FamilyFacts:
    """The family record of a run of ``entries`` (in corpus order) with ``results`` by entry id."""
    counts = dict.fromkeys(FAMILIES, 0)
    canaries: list[CanaryOutcome] = []
    negatives: list[NegativeOutcome] = []
    scored: list[TranslationResult | None] = []  # counted a chunk at a time: a million results are never all held
    abstained = failed = 0
    for entry, result in _pairs(entries, results):  # this runs for each entry of each card published: kept lean
        family = entry.get("family")
        if not family or family == "scored" or not isinstance(family, str):  # `family_of`, inlined
            scored.append(result)
            if len(scored) == _CHUNK:
                abstained, failed = _count_scored(scored, abstained, failed)
                counts["scored"] += len(scored)
                scored.clear()
            continue
        counts[family] += 1
        if family == "canary":
            canaries.append(_canary(entry, result))
        elif family == "negative":
            negatives.append(_negative(entry, result))
    abstained, failed = _count_scored(scored, abstained, failed)
    counts["scored"] += len(scored)
    passed = sum(c.passed for c in canaries)
    violated = sum(n.outcome == "violated" for n in negatives)
    return FamilyFacts(scored=counts["scored"], canary=counts["canary"], negative=counts["negative"],
                       canary_pass_rate=Ratio(numerator=passed, denominator=len(canaries)),
                       negative_violation_rate=Ratio(numerator=violated, denominator=len(negatives)),
                       abstention_rate=Ratio(numerator=abstained, denominator=counts["scored"]),
                       scored_errors=Ratio(numerator=failed, denominator=counts["scored"]),
                       canaries=canaries, negatives=negatives)


_CHUNK = 4096


def _count_scored(scored: list[TranslationResult | None], abstained: int, failed: int) -> tuple[int, int]:
    """``abstained`` and ``failed`` with those of ``scored`` added (in C loops: no Python step per result)."""
    ran = [result for result in scored if result is not None]
    return (abstained + sum(map(attrgetter("abstained"), ran)),
            failed + len(ran) - list(map(attrgetter("error"), ran)).count(None))


def _pairs(entries: Sequence[Mapping[str, Any]], results: Mapping[str, TranslationResult] | LoggedResults
           ) -> Iterable[tuple[Mapping[str, Any], TranslationResult | None]]:
    if isinstance(results, Mapping):  # `pairs`, without a generator's step per entry
        return zip(entries, map(results.get, [str(entry["id"]) for entry in entries]), strict=True)
    return pairs(entries, results)


def _canary(entry: Mapping[str, Any], result: TranslationResult | None) -> CanaryOutcome:
    rule_text = str(entry.get("pass_rule") or "")
    outcome = CanaryOutcome(id=str(entry["id"]), rule=rule_text, passed=False, detail="")
    if result is None:
        outcome.detail = "no result"
    elif result.error is not None:
        outcome.detail = f"failed: {result.error[:120]}"
    elif result.abstained:
        outcome.detail = f"abstained: {(result.abstain_reason or '')[:120]}"
    else:
        outcome.passed, outcome.detail = PassRule(rule_text).judge(result.predicted or "", str(entry["reference"]))
    return outcome


def _negative(entry: Mapping[str, Any], result: TranslationResult | None) -> NegativeOutcome:
    entry_id = str(entry["id"])
    if result is None:
        return NegativeOutcome(id=entry_id, outcome="no result", detail="the run has no result for it")
    if result.abstained:
        return NegativeOutcome(id=entry_id, outcome="abstained", detail=(result.abstain_reason or "")[:160])
    if result.error is not None:
        return NegativeOutcome(id=entry_id, outcome="refused", detail=result.error[:160])
    return NegativeOutcome(id=entry_id, outcome="violated", detail=f"translated as {quoted(result.predicted or '')}")
