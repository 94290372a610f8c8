"""Eligibility follows the class: S/O sandbox-evaluable, A1 only through the gateway and substitutable, A2
flagged "external dependency", X never — and the card says why."""

from __future__ import annotations

import pytest

from mt_eval.eligibility import Substitution, decide
from mt_eval.sandbox.policy import DeniedAttempt
from mt_eval.scan.findings import ScanFinding, ScanReport

CLEAN = ScanReport(files_scanned=1)
DIRTY = ScanReport(findings=[ScanFinding(file="p.py", line=1, kind="network", what="imports socket")], errors=1)
SUBSTITUTED = Substitution(model="b-2024", entries=["1", "2"], completed=2, failed=0)
FAILED = Substitution(model="b-2024", entries=["1", "2"], completed=1, failed=1, example_error="HTTP 500")


def verdict(**changes):
    facts = {"dependency_class": "S", "sandboxed": True, "through_gateway": False, "scan": CLEAN, "denied": [],
             "substitution": None, "complete": True, "official": True, **changes}
    return decide(**facts)


@pytest.mark.parametrize(("changes", "eligible", "reason"), [
    ({}, True, "class S: ran in the sandbox with no network"),
    ({"dependency_class": "O"}, True, "class O"),
    ({"sandboxed": False}, False, "did not run in the sandbox"),
    ({"scan": DIRTY}, False, "found 1 undeclared dependency"),
    ({"scan": None}, False, "static scan did not run"),
    ({"denied": [DeniedAttempt(kind="network", detail="Network is unreachable", count=3)]}, False,
     "denied 3 attempts (network)"),
    ({"denied": [DeniedAttempt(kind="file-access", detail="/etc/shadow", count=5, source="result"),  # (once, not 7)
                 DeniedAttempt(kind="file-access", detail="/etc/shadow", count=2, source="stderr")]}, False,
     "denied 5 attempts (file-access)"),
    ({"complete": False}, False, "not complete"),
    ({"dependency_class": None}, False, "declares no dependency class"),
    ({"dependency_class": "X"}, False, "class X"),
    ({"dependency_class": "A2", "scan": CLEAN}, False, "not prize-eligible"),
    ({"dependency_class": "A1"}, False, "only through the gateway"),
    ({"dependency_class": "A1", "through_gateway": True}, False, "substitutability was not tested"),
    ({"dependency_class": "A1", "through_gateway": True, "substitution": FAILED}, False, "1 of 2 entries failed"),
    ({"dependency_class": "A1", "through_gateway": True, "substitution": SUBSTITUTED}, True,
     "2 entries replayed with b-2024 ran end to end"),
])
def test_eligibility_by_class_and_evidence(changes, eligible, reason):
    result = verdict(**changes)
    assert result.eligible is eligible
    assert any(reason in r for r in result.reasons), result.reasons


def test_a2_is_flagged_external_dependency_even_when_everything_else_holds():
    result = verdict(dependency_class="A2")
    assert result.flags == ["external dependency"] and not result.eligible
