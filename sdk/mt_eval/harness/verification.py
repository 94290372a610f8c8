"""What re-verifying a run card found (`mt_eval.harness.verify`): each check made, and each problem with its
JSON path. The verifier, the checks of the card's records (`mt_eval.harness.verify_records`), the headline gate
and publishing all read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mt_eval.problems import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.harness.runcard import RunCard


@dataclass
class Check:
    """One verification step: ``passed`` is None when it could not be made (e.g. no corpus to read)."""

    name: str
    passed: bool | None
    detail: str


@dataclass
class Verification:
    """What `verify_card` found. ``data`` is the card as parsed, ``card`` the decoded `RunCard`."""

    path: str
    checks: list[Check] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    data: dict[str, Any] | None = None
    card: RunCard | None = None
    corpus_entries: int | None = None  # entries in the corpus file (a truncated run has fewer results)
    canonical: bytes | None = None  # the card's canonical JSON (sorted keys, compact), content_sha256 included
    source: Any = None  # the corpus its results were checked against (step 5), for `recompute_metrics`
    keys: list[str] = field(default_factory=list, repr=False)  # the results' ids as text, in order

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.passed is not False for c in self.checks) and not self.errors

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def check(self, name: str, passed: bool | None, detail: str) -> None:
        self.checks.append(Check(name, passed, detail))

    def problem(self, path: str, message: str, hint: str | None = None, *, code: str = "mismatch",
                severity: str = "error") -> None:
        self.problems.append(Problem(file=self.path, path=path, message=message, hint=hint, code=code,
                                     severity=severity))  # type: ignore[arg-type]

    def summary(self) -> str:
        """One line: verified, or why not."""
        if self.ok:
            return f"{self.path}: verified"
        count = len(self.errors)
        return f"{self.path}: does not verify ({count} problem{'s' if count != 1 else ''})"
