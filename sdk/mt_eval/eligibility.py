"""Whether a run may stand for its method on a leaderboard, following the dependency class:

* S, O: the method ran in the sandbox with no network, the static scan found nothing undeclared, and
  the sandbox denied nothing;
* A1: the same, it reached its model only through the gateway, and a sample replayed with a second
  allowlisted model ran end to end (substitutability);
* A2: never prize-eligible: scored, and flagged "external dependency";
* X: never.

The card's ``eligibility`` says ``eligible``, every reason (why not, or what was checked) and the flags.
"""

from __future__ import annotations

import msgspec

from mt_eval.sandbox.policy import DeniedAttempt, attempts_denied
from mt_eval.scan.findings import ScanReport

EXTERNAL = "external dependency"


class Substitution(msgspec.Struct, kw_only=True):
    """An A1 claim tested: a sample of entries replayed with another allowlisted model."""

    model: str
    entries: list[str]
    completed: int
    failed: int
    example_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.completed == len(self.entries) > 0


class Eligibility(msgspec.Struct, kw_only=True):
    eligible: bool
    reasons: list[str]
    flags: list[str] = msgspec.field(default_factory=list)
    official: bool = False
    substitution: Substitution | None = None


def decide(*, dependency_class: str | None, sandboxed: bool, through_gateway: bool, scan: ScanReport | None,
           denied: list[DeniedAttempt], substitution: Substitution | None, complete: bool,
           official: bool) -> Eligibility:
    """The eligibility of a finished run (see the module's table)."""
    reasons: list[str] = []
    flags: list[str] = []
    if dependency_class is None:
        reasons.append("the manifest declares no dependency class, so none can be checked")
    elif dependency_class == "X":
        reasons.append("class X (a bundled dependency that may not be redistributed) is never eligible")
    elif dependency_class == "A2":
        flags.append(EXTERNAL)
        reasons.append("class A2 depends on an external API: the run is scored but is not prize-eligible")
    if not sandboxed:
        reasons.append("the method did not run in the sandbox (run with --sandbox, or --official)")
    if scan is None:
        reasons.append("the static scan did not run")
    elif scan.errors:
        reasons.append(f"the static scan found {scan.errors} undeclared dependenc{'ies' if scan.errors != 1 else 'y'} "
                       "or unscannable file(s)")
    refused = sum(a.count for a in attempts_denied(denied))
    if refused:
        kinds = ", ".join(sorted({a.kind for a in denied}))
        reasons.append(f"the sandbox or the gateway denied {refused} attempt{'s' if refused != 1 else ''} ({kinds}): "
                       "the method reaches for something it does not declare")
    if dependency_class == "A1":
        if not through_gateway:
            reasons.append("an A1 method scores officially only through the gateway (--sandbox --gateway-policy)")
        elif substitution is None:
            reasons.append("substitutability was not tested: the gateway policy needs a second model")
        elif not substitution.ok:
            reasons.append(f"the replay with {substitution.model} did not run end to end: {substitution.failed} of "
                           f"{len(substitution.entries)} entries failed ({substitution.example_error})")
    if not complete:
        reasons.append("the run is not complete: not every entry has a result")
    if reasons:
        return Eligibility(eligible=False, reasons=reasons, flags=flags, official=official, substitution=substitution)
    granted = [f"class {dependency_class}: ran in the sandbox "
               + ("reaching only the LLM gateway" if dependency_class == "A1" else "with no network"),
               "the static scan found nothing undeclared", "the sandbox denied nothing"]
    if substitution is not None:
        granted.append(f"substitutable: {len(substitution.entries)} entries replayed with {substitution.model} "
                       "ran end to end")
    return Eligibility(eligible=True, reasons=granted, flags=flags, official=official, substitution=substitution)
