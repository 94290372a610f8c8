"""Dependency classes: what a method needs from the outside world, from S (self-contained) to X (closed).

Each dependency contributes one class; the method's class is the most restrictive (S < O < A1 < A2 < X).
The README's "Dependency classes" table states every rule with the spec's wording; in short:

=============  ==========================================================  ======
access         condition                                                   class
=============  ==========================================================  ======
bundled        ``redistributable`` and ``transferable`` both true           S
bundled        licence ``none``, or not redistributable, or not transferable X
mirrored       open licence (copyleft included) and ``redistributable``     O
mirrored       licence not open, or ``redistributable: false``              X
gateway        ``substitutable: true``                                      A1
gateway        ``substitutable: false``                                     A2
external-api   always (whatever ``substitutable`` says)                     A2
=============  ==========================================================  ======

"Open" is decided by `mt_eval.licenses`. A dependency with a rule violation (a licence that contradicts
``redistributable``, a mirrored one without a pin, …) contributes nothing until it is fixed: the manifest
reports the violation instead. ``"dependencies": []`` is a statement that there are none (class S); a
manifest without the list has an *undeclared* class. ``bridge/vectors/contract/dependency-matrix.json``
pins every access × licence × flag combination for both runtimes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import msgspec


class Dependency(Protocol):
    """What the derivation reads of a dependency (`mt_eval.manifest.Dependency` has it; the rules need nothing
    else, so they do not depend on the manifest)."""

    @property
    def id(self) -> str: ...

    @property
    def access(self) -> str: ...

    @property
    def license(self) -> str: ...

    @property
    def redistributable(self) -> bool: ...

    @property
    def transferable(self) -> bool: ...

    @property
    def substitutable(self) -> bool | None: ...

DependencyClass = Literal["S", "O", "A1", "A2", "X"]
CLASS_ORDER: tuple[DependencyClass, ...] = ("S", "O", "A1", "A2", "X")
CLASS_MEANING: dict[DependencyClass, str] = {
    "S": "self-contained",
    "O": "open external artifacts",
    "A1": "substitutable API",
    "A2": "specific external API",
    "X": "closed",
}


class Contribution(msgspec.Struct, frozen=True, kw_only=True):
    """The class one dependency contributes, and why."""

    index: int
    dependency_id: str
    dependency_class: DependencyClass
    reason: str

    @property
    def path(self) -> str:
        return f"$.dependencies[{self.index}]"


class Derivation(msgspec.Struct, frozen=True, kw_only=True):
    """A method's derived dependency class with each dependency's contribution."""

    dependency_class: DependencyClass | None
    contributions: tuple[Contribution, ...] = ()

    def explain(self) -> str:
        if self.dependency_class is None:
            return "undeclared (method.json has no \"dependencies\" list)"
        if not self.contributions:
            return 'S (no dependencies: "dependencies": [])'
        lines = [f"{c.path} {c.dependency_id}: {c.dependency_class} ({c.reason})" for c in self.contributions]
        return "; ".join(lines)


def most_restrictive(classes: Sequence[DependencyClass]) -> DependencyClass:
    return max(classes, key=CLASS_ORDER.index, default="S")


def contribution(index: int, dep: Dependency) -> Contribution:
    """Classify one dependency according to the table in this module's docstring."""
    from mt_eval.licenses import NONE, check_licence

    cls: DependencyClass
    if dep.access == "bundled":
        missing = [flag for flag in ("redistributable", "transferable") if not getattr(dep, flag)]
        if dep.license == NONE:
            cls, reason = "X", "bundled without a licence"
        elif not missing:
            cls, reason = "S", f"bundled, {dep.license} lets it be redistributed and transferred with the method"
        else:
            cls, reason = "X", f"bundled, but not {' nor '.join(missing)}: others cannot receive it with the method"
    elif dep.access == "mirrored":
        if not check_licence(dep.license).is_open:
            cls, reason = "X", f"mirrored, but {dep.license} is not an open licence"
        elif not dep.redistributable:
            cls, reason = "X", "mirrored, but not redistributable: no one else can obtain the pinned copy"
        else:
            cls, reason = "O", f"mirrored, open licence {dep.license}"
    elif dep.access == "gateway":
        if dep.substitutable:
            cls, reason = "A1", "gateway, substitutable"
        else:
            cls, reason = "A2", "gateway, not substitutable"
    else:
        cls, reason = "A2", "external API"
    return Contribution(index=index, dependency_id=dep.id, dependency_class=cls, reason=reason)


def derive(dependencies: Sequence[Dependency] | None) -> Derivation:
    """The effective class of a dependency list; ``None`` (no list) stays undeclared."""
    if dependencies is None:
        return Derivation(dependency_class=None)
    contributions = tuple(contribution(i, dep) for i, dep in enumerate(dependencies))
    return Derivation(
        dependency_class=most_restrictive([c.dependency_class for c in contributions]),
        contributions=contributions,
    )
