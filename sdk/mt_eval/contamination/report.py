"""What a contamination check found: hits, findings about files it could not fully read, the planted
control, and the verdict they add up to."""

from __future__ import annotations

from typing import Literal

import msgspec

from mt_eval.contamination.settings import CheckSettings

Status = Literal["clean", "contaminated", "unverified", "not-run"]
HitKind = Literal["exact", "near-duplicate", "long-ngram"]
Side = Literal["source", "reference"]
Effect = Literal["unverified", "info"]


class Hit(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """A corpus text found in the bundle (or in the other corpus).

    ``file`` and ``line`` locate it (``byte`` instead of ``line`` inside a binary file; ``against_id`` and
    ``against_side`` instead of a line when a corpus is compared with a corpus). ``coverage`` is the share
    of the entry's words inside shared runs of at least ``ngram`` words; ``longest_run`` the longest run;
    ``matched`` the normalised words found there.
    """

    file: str
    line: int | None = None
    byte: int | None = None
    against_id: str | None = None
    against_side: Side | None = None
    corpus: str
    entry_id: str
    side: Side
    kind: HitKind
    coverage: float
    longest_run: int
    entry_words: int
    matched: str

    @property
    def where(self) -> str:
        if self.against_id is not None:
            return f"{self.file} entry {self.against_id} ({self.against_side})"
        if self.byte is not None:
            return f"{self.file} @byte {self.byte}"
        return f"{self.file}:{self.line}"


class Finding(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """Something about a file that is not a hit: it could not be read, was not followed, was read another
    way than asked. ``effect`` "unverified" means the check could not see all of it, so the verdict
    cannot be "clean"."""

    file: str
    kind: str
    message: str
    effect: Effect = "info"


class Planted(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One corpus text planted in the control copy, where, how it was perturbed, and whether it was found."""

    corpus: str
    entry_id: str
    side: Side
    carrier: str
    file: str
    line: int
    perturbations: list[str]
    found: bool = False


class ControlResult(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The planted control: recall on the planted entries, with the seed and every planted entry."""

    seed: int
    planted: list[Planted]
    found: int
    recall: float | None
    floor: float
    note: str | None = None

    @property
    def verified(self) -> bool:
        return self.recall is not None and self.recall >= self.floor


class CorpusSummary(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    path: str
    name: str
    sha256: str
    entries: int
    texts: int


class Report(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The whole result of one check."""

    status: Status
    reasons: list[str]
    target: str
    mode: Literal["bundle", "corpus"]
    corpora: list[CorpusSummary]
    settings: CheckSettings
    files: int
    bytes: int
    texts_too_short: int
    texts_uncheckable: int
    hits: list[Hit]
    findings: list[Finding]
    control: ControlResult | None
    seconds: float


def verdict(hits: list[Hit], findings: list[Finding], control: ControlResult | None,
            checkable: int) -> tuple[Status, list[str]]:
    """The status the results add up to, and why."""
    if hits:
        entries = len({(h.corpus, h.entry_id) for h in hits})
        plural = "entries" if entries != 1 else "entry"
        return "contaminated", [f"{len(hits)} hit{_s(len(hits))} on {entries} corpus {plural}"]
    reasons = []
    blocking = [f for f in findings if f.effect == "unverified"]
    if blocking:
        reasons.append(f"{len(blocking)} file{_s(len(blocking))} could not be fully read "
                       f"(first: {blocking[0].file}: {blocking[0].message})")
    if checkable == 0:
        reasons.append("no corpus text is long enough to check")
    if control is None:
        reasons.append("the planted control was not run")
    elif control.recall is None:
        reasons.append(f"the planted control could not run: {control.note}")
    elif not control.verified:
        reasons.append(f"planted-control recall {control.recall:.2f} is below the floor {control.floor:.2f}")
    return ("unverified", reasons) if reasons else ("clean", [])


def _s(count: int) -> str:
    return "" if count == 1 else "s"
