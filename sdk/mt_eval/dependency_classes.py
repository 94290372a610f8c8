"""Dependency classes: what a method needs from the outside world, from S (self-contained) to X (closed).

Each dependency contributes one class; the method's class is the most restrictive (S < O < A1 < A2 < X).

=============  ==========================================================  ======
access         condition                                                   class
=============  ==========================================================  ======
bundled        licence lets it travel with the method: ``redistributable``  S
               or ``transferable`` is true, or neither is given and the
               licence is open
bundled        licence ``none``, or not redistributable nor transferable    X
mirrored       open licence (copyleft included), pinned                     O
mirrored       licence not open (``proprietary``, ``none``, NC/ND, ...)      X
gateway        ``substitutable: true`` (any equivalent endpoint will do)    A1
gateway        ``substitutable: false``                                     A2
external-api   always                                                       A2
=============  ==========================================================  ======

"Open" is decided by `mt_eval.licenses`. ``"dependencies": []`` is a statement that there are none
(class S); a manifest without the list has an *undeclared* class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

if TYPE_CHECKING:
    from mt_eval.manifest import Dependency

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

    licence = check_licence(dep.license)
    cls: DependencyClass
    if dep.access == "bundled":
        travels = dep.redistributable is True or dep.transferable is True or (
            dep.redistributable is None and dep.transferable is None and licence.is_open)
        if dep.license == NONE:
            cls, reason = "X", "bundled without a licence"
        elif travels:
            cls, reason = "S", f"bundled, {dep.license} lets it travel with the method"
        else:
            cls, reason = "X", f"bundled, but {dep.license} does not let others redistribute it"
    elif dep.access == "mirrored":
        if licence.is_open:
            cls, reason = "O", f"mirrored, open licence {dep.license}"
        else:
            cls, reason = "X", f"mirrored, but {dep.license} is not an open licence"
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
