"""The headline gate: a run has a headline only when its canaries pass, its controls hold, its scored
denominator means something and its covariates are recorded. Fail-closed: what is not known fails.

Each rule is checked and reported on its own, with the card's figure and the policy's threshold
(`mt_eval.harness.policy`):

- **verified** (``mt-eval gate``, compare and publishing; the run that writes a card computes its own
  figures): the card re-verifies (`mt_eval.harness.verify`);
- **canaries**: at least ``min_canaries`` canary entries ran, and the share that passed their own rule is at
  least ``min_canary_pass_rate``;
- **negatives**: at least ``min_negatives`` negative controls ran, and the share translated instead of
  refused or abstained on is at most ``max_negative_violation_rate``;
- **scored**: the card has metrics over at least ``min_scored`` scored entries (a denominator of 1 says
  nothing), and its headline metric has its 95% interval (a card scored without bootstrap resamples has none);
- **abstention**: the share of scored entries abstained on is at most ``max_abstention_rate`` (when set);
- **covariates**: every covariate in ``required_covariates`` is recorded, with a value or as not applicable
  (`mt_eval.harness.covariates`);
- **contamination**: the contamination check of the method's bundle satisfies ``contamination``
  (`mt_eval.contamination.policy.require_clean`: by default, no evaluation data was found in it).

A card written by an older mt-eval lacks the families and covariate records: its gate fails, naming the
missing field.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from mt_eval.contamination.policy import require_clean
from mt_eval.corpus.families import marking
from mt_eval.harness.covariates import covariate_states
from mt_eval.harness.metric_statistics import MIN_RESAMPLES, UPSTREAM_MIN_SEGMENTS
from mt_eval.harness.policy import CONTAMINATION_WANTED, GatePolicy, ResolvedPolicy, percent, thresholds
from mt_eval.harness.runcard import GateCheck, GateFacts, RunCard

if TYPE_CHECKING:
    from mt_eval.harness.families import FamilyFacts, Ratio
    from mt_eval.harness.verification import Verification


def apply_gate(card: RunCard, resolved: ResolvedPolicy, *, data: dict[str, Any] | None = None,
               verification: Verification | None = None, memo: dict[str, list[GateCheck]] | None = None
               ) -> GateFacts:
    """The gate's verdict on ``card`` under ``resolved``; ``verification`` adds the "verified" rule.

    The rules' checks depend only on the card and the thresholds, so ``memo`` (the verification's
    ``gate_rules`` by default) keeps them by the thresholds' sha256: re-checking a card's recorded verdict and
    then judging it under a policy of the same thresholds (publishing) applies the rules once."""
    policy = resolved.policy
    sha256 = resolved.sha256
    if memo is None and verification is not None and verification.card is card:
        memo = verification.gate_rules
    rules = None if memo is None else memo.get(sha256)
    if rules is None:
        families = card.families
        rules = [_canaries(card, families, policy), _negatives(card, families, policy), _scored(card, policy),
                 _abstention(families, policy), _covariates(card, data, policy)]
        if policy.contamination not in (None, "off"):
            rules.append(_contamination(card, policy))
        if memo is not None:
            memo[sha256] = rules
    checks: list[GateCheck] = []
    if verification is not None:
        ok = verification.ok
        problems = [p.render().splitlines()[0] for p in verification.errors] if not ok else []
        checks.append(GateCheck(rule="verified", passed=ok,
                                figure="the card re-verifies" if ok else f"does not verify "
                                f"({len(problems)} problem{'s' if len(problems) != 1 else ''})",
                                threshold="content hash, corpus and every metric re-verify", details=problems[:10]))
    checks += rules
    failures = [f"{c.rule}: {c.details[0] if c.details else c.figure}" for c in checks if not c.passed]
    return GateFacts(passed=not failures, policy=policy.name, failures=failures, policy_sha256=sha256,
                     thresholds=thresholds(policy), checks=checks)


def _no_families(card: RunCard) -> str:
    return ("the card records no corpus families ($.families): it was written by an older mt-eval; run the "
            "evaluation again with this one")


def _canaries(card: RunCard, families: FamilyFacts | None, policy: GatePolicy) -> GateCheck:
    wanted = f"at least {policy.min_canaries}, pass rate at least {percent(policy.min_canary_pass_rate)}"
    ratio = None if families is None else families.canary_pass_rate
    failing = [] if families is None or ratio is None or ratio.rate is None or ratio.rate >= \
        policy.min_canary_pass_rate else [f"canary {c.id} failed ({c.rule}): {c.detail}"
                                          for c in families.canaries if not c.passed]
    if failing and ratio is not None:
        failing += _too_close_to_show(ratio, policy.min_canary_pass_rate, "under", "min_canary_pass_rate")
    return _family_check(card, "canaries", "canary", None if families is None else families.canary,
                         policy.min_canaries, ratio, "passed", wanted, failing, "")


def _negatives(card: RunCard, families: FamilyFacts | None, policy: GatePolicy) -> GateCheck:
    wanted = f"at least {policy.min_negatives}, violation rate at most {percent(policy.max_negative_violation_rate)}"
    ratio = None if families is None else families.negative_violation_rate
    failing = [] if families is None or ratio is None or ratio.rate is None or ratio.rate <= \
        policy.max_negative_violation_rate else [f"negative control {n.id} was {n.detail}"
                                                 for n in families.negatives if n.outcome == "violated"]
    if failing and ratio is not None:
        failing += _too_close_to_show(ratio, policy.max_negative_violation_rate, "over", "max_negative_violation_rate")
    return _family_check(card, "negatives", "negative", None if families is None else families.negative,
                         policy.min_negatives, ratio, "violated", wanted, failing,
                         " (input the method must refuse or abstain on)")


def _too_close_to_show(ratio: Ratio, limit: float, side: str, field: str) -> list[str]:
    """The exact rate and threshold of a rate that misses its threshold by less than the percentages shown tell
    (2/3 against 0.667 reads "66.7% passed", "at least 66.7%"), as a detail after the rule's own first one."""
    rate = ratio.rate
    if rate is None or (f"{rate * 100:.1f}" != f"{limit * 100:.1f}" and percent(rate) != percent(limit)):
        return []
    return [f"{ratio.numerator}/{ratio.denominator} is {rate!r}, {side} the policy's {field} {limit!r}"]


def _family_check(card: RunCard, rule: str, family: str, ran: int | None, least: int, ratio: Ratio | None,
                  verb: str, wanted: str, failing: list[str], how: str) -> GateCheck:
    """A family's rule: at least ``least`` of its entries ran (a card without families has none on record),
    and none of ``failing`` (its rate is within the policy's)."""
    if ran is None or ratio is None:
        required = least > 0
        return GateCheck(rule=rule, passed=not required, figure="not recorded", threshold=wanted,
                         details=[_no_families(card)] if required else [])
    corpus_format = None if card.corpus.reading is None else card.corpus.reading.format
    mark = f"mark them in {card.corpus.path} with {marking(family, corpus_format)}{how}"
    if corpus_format == "parallel":  # (a line has no fields)
        mark = (f"parallel text has no fields to mark them with: give the corpus as JSONL, JSON or a TSV with a "
                f"header, with {marking(family, None)}{how} on those entries")
    if card.selection is not None:  # the corpus may have them, and the selection left them out
        mark = (f"this run is a selection ({card.selection.entries_selected} of the corpus's {card.corpus.entries} "
                f"entries): run the whole corpus, or select its {rule.replace('negatives', 'negative controls')} too "
                f"(or {mark})")
    details = [] if ran >= least else [
        f"{ran} {rule.replace('negatives', 'negative controls')} ran; the policy needs at least {least}: {mark}"]
    details += failing
    return GateCheck(rule=rule, passed=not details, figure=f"{ratio} {verb}", threshold=wanted, details=details)


def unscored_reason(card: RunCard) -> str:
    """Why a card of a run that did not fail has no metrics."""
    reading = card.corpus.reading
    if reading is not None and not reading.references:
        return "the corpus has no references (translation only)"
    if card.families is not None and card.families.scored == 0:
        return ("the run has no scored entry: the entries it ran are canaries and negative controls only ("
                + ("select scored entries too)" if card.selection is not None else
                   "the corpus has none: add entries without a family, which are scored)"))
    if card.families is not None and card.families.scored_errors.numerator == card.families.scored:
        return f"no scored entry was translated: all {card.families.scored} failed (the card's failures say why)"
    if card.families is not None and (card.families.scored_errors.numerator
                                      + card.families.abstention_rate.numerator) >= card.families.scored:
        return (f"no scored entry was translated: of {card.families.scored}, "
                f"{card.families.abstention_rate.numerator} abstained on and {card.families.scored_errors.numerator} "
                "failed (the card's results say why)")
    return "not every entry has a result"


def _scored(card: RunCard, policy: GatePolicy) -> GateCheck:
    wanted = f"at least {policy.min_scored} scored entries"
    if card.metrics is None:
        why = ("no scored entry was translated" if getattr(card, "status", None) == "failed" else
               f"the card has no metrics: {unscored_reason(card)}")
        return GateCheck(rule="scored", passed=False, figure="no metrics", threshold=wanted, details=[why])
    n = card.metrics.segments
    details = [] if n >= policy.min_scored else [f"{n} scored entr{'y' if n == 1 else 'ies'}: a headline needs at "
                                                 f"least {policy.min_scored} (the policy's min_scored)"]
    chosen = next((m for m in card.metrics.metrics if m.name == card.metrics.headline), None)
    resamples = card.metrics.bootstrap_resamples
    families = card.families  # (the scored entries translated without an error: what upstream counts)
    translated = n if families is None else families.scored - families.scored_errors.numerator
    if chosen is not None and (chosen.ci_low is None or chosen.ci_high is None) and resamples > 0 and \
            card.metrics.bootstrap == "upstream" and translated < UPSTREAM_MIN_SEGMENTS:
        failed = "" if translated == n else ": the other failed" if n - translated == 1 else ": the others failed"
        details.append(f"the headline metric {chosen.name} has no 95% interval: the upstream bootstrap gives none "
                       f"when fewer than {UPSTREAM_MIN_SEGMENTS} scored entries were translated ({translated} of {n}"
                       f"{failed}; score more entries)")
    elif chosen is not None and (chosen.ci_low is None or chosen.ci_high is None):
        details.append(f"the headline metric {chosen.name} has no 95% interval (the card was scored with "
                       f"{resamples} bootstrap resamples): a headline is given with its interval, so score the run "
                       f"with resamples (mt-eval run --resamples N, N ≥ {MIN_RESAMPLES})")
    elif chosen is not None and resamples < MIN_RESAMPLES:
        details.append(f"the headline's 95% interval comes from {resamples} bootstrap resample"
                       f"{'s' if resamples != 1 else ''}, too few to mean anything: score the run with at least "
                       f"{MIN_RESAMPLES} (mt-eval run --resamples N; 1000 is the default)")
    return GateCheck(rule="scored", passed=not details, figure=f"{n} scored entries", threshold=wanted,
                     details=details)


def _abstention(families: FamilyFacts | None, policy: GatePolicy) -> GateCheck:
    limit = policy.max_abstention_rate
    wanted = "no limit" if limit is None else f"at most {percent(limit)}"
    if families is None:
        passed = limit is None
        return GateCheck(rule="abstention", passed=passed, figure="not recorded", threshold=wanted,
                         details=[] if passed else ["the card records no abstentions ($.families)"])
    ratio = families.abstention_rate
    rate = ratio.rate
    details = ([f"the method abstained on {ratio} of the scored entries",
                *_too_close_to_show(ratio, limit, "over", "max_abstention_rate")]
               if limit is not None and rate is not None and rate > limit else [])
    return GateCheck(rule="abstention", passed=not details, figure=f"{ratio} abstained", threshold=wanted,
                     details=details)


def _covariates(card: RunCard, data: dict[str, Any] | None, policy: GatePolicy) -> GateCheck:
    states = covariate_states(card, data, settings=False)
    required = [states[name] for name in policy.required_covariates]
    missing = [f"{s.name} {s.shown}" for s in required if not s.present]
    figure = f"{len(required) - len(missing)} of {len(required)} recorded"
    wanted = "recorded, or not applicable: " + (", ".join(policy.required_covariates) or "none")
    return GateCheck(rule="covariates", passed=not missing, figure=figure, threshold=wanted, details=missing,
                     notes=[f"{s.name}: {s.shown}" for s in required if s.present])


def _contamination(card: RunCard, policy: GatePolicy) -> GateCheck:
    record = card.contamination
    assert policy.contamination is not None
    verdict = require_clean(record, policy.contamination)
    figure = "not recorded" if record is None else record.status + (
        f", {record.hits_total} hit{'s' if record.hits_total != 1 else ''}" if record.hits_total else "")
    details = list(verdict.reasons)
    if record is not None and record.status == "contaminated":
        details.append(f"the method's bundle holds text of the corpus: remove it (mt-eval contamination --method "
                       f"DIR --corpus {card.corpus.path} shows each place)")
    elif record is None:
        details.append("run the evaluation again with this mt-eval, whose run checks the bundle")
    return GateCheck(rule="contamination", passed=verdict.passed, figure=figure,
                     threshold=CONTAMINATION_WANTED[policy.contamination], details=details)


def headline(card: RunCard) -> str | None:
    """``chrF++ 45.67 [40.12, 51.03] over 30 scored entries``, or None without metrics; the scored entries that
    count as empty translations are said with the denominator (`_scored_as_empty`)."""
    if card.metrics is None:
        return None
    chosen = next((m for m in card.metrics.metrics if m.name == card.metrics.headline), None)
    if chosen is None:
        return None
    low, high = chosen.ci_low, chosen.ci_high
    interval = "" if low is None or high is None else f" [{low:.2f}, {high:.2f}]"
    denominator = f"over {card.metrics.segments} scored entries{_scored_as_empty(card)}"
    return f"{chosen.name} {chosen.score:.2f}{interval} {denominator}"


def _scored_as_empty(card: RunCard) -> str:
    """``, of which 29 failed and 1 was abstained on: scored as empty translations``, or nothing when every
    scored entry was translated (or the card records no families)."""
    families = card.families
    if families is None:
        return ""
    failed, abstained = families.scored_errors.numerator, families.abstention_rate.numerator
    verb = "was" if abstained == 1 else "were"
    said = [f"{failed} failed"] * bool(failed) + [f"{abstained} {verb} abstained on"] * bool(abstained)
    return f", of which {' and '.join(said)}: scored as empty translations" if said else ""


def gate_command(card_path: str | Path, policy_file: str | Path | None) -> str:
    """The ``mt-eval gate`` command that shows every rule of a verdict: under the policy that gave it (``None``:
    the shipped one), since the shipped policy may judge the card otherwise."""
    import shlex

    command = f"mt-eval gate {shlex.quote(str(card_path))}"
    return command + (f" --policy {shlex.quote(str(policy_file))}" if policy_file is not None else "")


def recheck(card: RunCard, data: dict[str, Any], memo: dict[str, list[GateCheck]] | None = None
            ) -> list[tuple[str, str]]:
    """The card's recorded gate re-applied with the thresholds it records: ``(JSON path, what differs)`` for
    each disagreement (`mt_eval.harness.verify` reports them). ``memo``: as for `apply_gate`."""
    gate = card.gate
    if gate is None:
        return []
    if gate.thresholds is None:  # written by another tool: nothing to re-apply (mt-eval gate judges the card)
        return []
    recorded = _recorded_policy(gate.policy, msgspec.json.encode(gate.thresholds))
    if isinstance(recorded, str):
        return [("$.gate.thresholds", f"not a policy: {recorded}")]
    again = apply_gate(card, recorded, data=data, memo=memo)
    wrong = []
    if again.policy_sha256 != gate.policy_sha256:
        wrong.append(("$.gate.policy_sha256", f"the card says {gate.policy_sha256}, its thresholds hash to "
                                              f"{again.policy_sha256}"))
    if again.passed != gate.passed:
        wrong.append(("$.gate.passed", f"the card says {'passed' if gate.passed else 'failed'}, its own figures "
                                       f"{'pass' if again.passed else 'fail'}"
                      + (f" ({'; '.join(again.failures)})" if again.failures else "")))
    elif again.failures != gate.failures:
        wrong.append(("$.gate.failures", "the failures the card lists differ from its own figures'"))
    return wrong + _checks_differ(gate.checks, again.checks)


_SAME_WHEN_EQUAL = (str, bool)  # types whose equal values have the same JSON


def _checks_differ(stated: list[GateCheck], again: list[GateCheck]) -> list[tuple[str, str]]:
    """Each recorded rule's figure, threshold and outcome that the rule applied again to the card does not give
    (a rule the card lacks is not one: an older card may not have it)."""
    by_rule = {check.rule: check for check in again}
    wrong = []
    for i, check in enumerate(stated):
        own = by_rule.get(check.rule)
        if own is None:
            wrong.append((f"$.gate.checks[{i}].rule", f"the card says {check.rule!r}, a rule its thresholds do not "
                                                      "make"))
            continue
        for field in ("figure", "threshold", "passed"):
            said, made = getattr(check, field), getattr(own, field)
            if type(said) is type(made) and type(said) in _SAME_WHEN_EQUAL and said == made:
                continue  # (the common case, without encoding either: equal text or flags encode alike)
            said, made = msgspec.json.encode(said).decode(), msgspec.json.encode(made).decode()
            if said != made:
                wrong.append((f"$.gate.checks[{i}].{field}", f"{check.rule}: the card says {said}, its own figures "
                                                             f"and thresholds give {made}"))
    return wrong


@functools.lru_cache(maxsize=64)
def _recorded_policy(name: str, thresholds_json: bytes) -> ResolvedPolicy | str:
    """The policy a card's gate records (its name and thresholds), or why it is not one; made once for the many
    cards of a bulk publish that record the same."""
    try:
        return ResolvedPolicy(msgspec.convert({"name": name, **msgspec.json.decode(thresholds_json)}, GatePolicy),
                              "the card")
    except (msgspec.ValidationError, ValueError) as exc:
        return str(exc)
