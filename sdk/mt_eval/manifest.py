"""``method.json``: the plugin manifest and its dependency entries.

Defaults for a seed-era manifest that has only ``name`` and ``entry_point``:
``method_id`` is the plugin directory's name (kebab-cased), ``class`` is ``custom-plugin``,
``supported_pairs`` is empty (any pair), ``implements`` is ``["translate"]`` and the dependency class is
*undeclared* (a warning).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Literal

import msgspec

from mt_eval.decisions.records import QUESTION_TYPES, QuestionType
from mt_eval.dependency_classes import CLASS_ORDER, DependencyClass, Derivation, derive
from mt_eval.problems import Finding
from mt_eval.strict import StrictStruct

MethodClass = Literal["raw-llm", "coached-llm", "pipeline", "custom-plugin", "api", "human"]
Request = Literal["translate", "decide"]
DependencyKind = Literal["data", "model", "software", "service"]
Access = Literal["bundled", "mirrored", "gateway", "external-api"]

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"
PAIR = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*>[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
_ENTRY_POINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")


def kebab_case(text: str) -> str:
    """A best-effort kebab-case form of ``text`` ("My Método v2" → "my-metodo-v2").

    `bridge/vectors/method-ids.json` pins this down for every implementation.
    """
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


MethodId = Annotated[
    str,
    msgspec.Meta(
        pattern=KEBAB,
        description="Stable identifier: lowercase letters and digits in words joined by hyphens.",
        extra={"pattern_means": "kebab-case", "hint": "use lowercase words joined by hyphens",
               "suggest": kebab_case},
    ),
]
LanguagePair = Annotated[
    str,
    msgspec.Meta(
        pattern=PAIR,
        description='A source>target language pair in ISO 639 codes, e.g. "eng>spa".',
        extra={"pattern_means": 'a "source>target" language pair',
               "hint": 'write the pair as "source>target" with ISO 639 codes, e.g. "eng>spa"',
               "suggest": lambda v: re.sub(r"\s*(?:->|→|:|-|>|/|_)\s*", ">", v.strip().lower(), count=1)},
    ),
]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class Dependency(StrictStruct, kw_only=True):
    """One thing a method needs that is not its own code."""

    id: Annotated[str, msgspec.Meta(min_length=1, description="Short name, unique within the manifest.")]
    kind: Annotated[DependencyKind, msgspec.Meta(extra={"what": "dependency kind"})]
    license: Annotated[str, msgspec.Meta(
        min_length=1, description='SPDX licence expression, "proprietary", or "none" when there is no licence.')]
    access: Annotated[Access, msgspec.Meta(
        description="How a run reaches it: bundled in the plugin, mirrored (a pinned copy), through a "
                    "gateway (an endpoint any equivalent provider can serve), or an external API.",
        extra={"what": "access"})]
    source: Annotated[str, msgspec.Meta(description="Where it comes from (URL, package name, ...).")] | None = None
    pin: Annotated[str, msgspec.Meta(
        description="Exact version, checksum or commit of a mirrored artifact.")] | None = None
    substitutable: Annotated[bool, msgspec.Meta(
        description="gateway / external-api: can an equivalent service stand in for it?")] | None = None
    redistributable: bool | None = None
    transferable: bool | None = None
    notes: str | None = None

    def findings(self) -> Iterator[Finding]:
        from mt_eval.licenses import NONE, PROPRIETARY, check_licence

        licence = check_licence(self.license)
        if not licence.ok:
            yield Finding(("license",), licence.message or "invalid licence", licence.hint, code="licence")
        if self.access == "mirrored" and not self.pin:
            yield Finding(("pin",), 'a "mirrored" dependency needs "pin"',
                          'add "pin": the exact version, checksum or commit of the copy you mirror',
                          code="missing-pin")
        if self.access in ("gateway", "external-api") and self.substitutable is None:
            yield Finding(("substitutable",), f'a "{self.access}" dependency needs "substitutable"',
                          'add "substitutable": true if any equivalent endpoint can serve it, else false',
                          code="missing-substitutable")
        if self.redistributable is True and self.license in (NONE, PROPRIETARY):
            yield Finding(("redistributable",),
                          f'"redistributable": true contradicts licence "{self.license}"',
                          "give the SPDX licence that allows redistribution, or set redistributable to false",
                          code="contradiction")
        if self.pin and self.access != "mirrored":
            yield Finding(("pin",), f'"pin" has no effect on a "{self.access}" dependency',
                          'remove "pin", or set "access": "mirrored"', severity="warning", code="unused")


AnsweredType = Annotated[QuestionType, msgspec.Meta(extra={"what": "question type"})]


class DecideSpec(StrictStruct, kw_only=True):
    """What a decision method answers, and the largest input it takes."""

    question_types: Annotated[list[AnsweredType], msgspec.Meta(
        min_length=1, description="The question types it answers (default: all three).")] = msgspec.field(
        default_factory=lambda: list(QUESTION_TYPES))
    max_input_chars: Annotated[int, msgspec.Meta(
        ge=1, description="The longest input it takes, in characters of the row's state and questions as compact "
                          "JSON; a longer row fails without being sent (never truncated).")] | None = None

    def findings(self) -> Iterator[Finding]:
        for kind, count in Counter(self.question_types).items():
            if count > 1:
                yield Finding(("question_types",), f'"{kind}" is listed {count} times', "list each type once",
                              severity="warning", code="duplicate")


class Manifest(StrictStruct, kw_only=True):
    """``method.json``: what a method is called, how it runs, and what it depends on."""

    schema: str | None = msgspec.field(default=None, name="$schema")
    name: Annotated[str, msgspec.Meta(min_length=1, description="What people call the method.")]
    method_id: MethodId | None = None
    method_class: Annotated[MethodClass, msgspec.Meta(extra={"what": "method class"})] = msgspec.field(
        default="custom-plugin", name="class")
    version: str | None = None
    description: str | None = None
    author: str | None = None
    entry_point: Annotated[str, msgspec.Meta(
        description='Python entry: "module:Class", the module inside the plugin directory.')] | None = None
    node_entry: Annotated[str, msgspec.Meta(
        description='Node entry: a JavaScript file in the plugin directory, e.g. "translate.js".')] | None = None
    command: Annotated[list[NonEmpty], msgspec.Meta(
        min_length=1, description="Any other runtime: the argv of a program that speaks the bridge protocol.")
    ] | None = None
    supported_pairs: list[LanguagePair] = msgspec.field(default_factory=list)
    implements: Annotated[list[Annotated[Request, msgspec.Meta(extra={"what": "request"})]], msgspec.Meta(
        min_length=1, description='What the method answers: "translate" (translate(entries, config)), "decide" '
                                  '(decide(rows, config)) or both. Default: ["translate"].')] = msgspec.field(
        default_factory=lambda: ["translate"])
    decide: Annotated[DecideSpec, msgspec.Meta(
        description='A decision method\'s question types and input limit (with "decide" in implements).')
    ] | None = None
    dependency_class: Annotated[DependencyClass, msgspec.Meta(extra={"what": "dependency class"})] | None = None
    dependencies: list[Dependency] | None = None

    def derivation(self) -> Derivation:
        return derive(self.dependencies)

    def findings(self) -> Iterator[Finding]:
        if not (self.entry_point or self.node_entry or self.command):
            yield Finding((), "no entry point: the method cannot run",
                          'add "entry_point": "pipeline:MyMethod" (Python), "node_entry": "translate.js" '
                          '(Node) or "command": [...] (any program speaking the bridge protocol)',
                          code="no-entry")
        if self.entry_point is not None:
            yield from _entry_point_findings(self.entry_point)
        if self.node_entry is not None:
            yield from _relative_file_findings(("node_entry",), self.node_entry, (".js", ".mjs", ".cjs"))
        yield from self._implements_findings()
        for pair, count in Counter(self.supported_pairs).items():
            if count > 1:
                yield Finding(("supported_pairs",), f'"{pair}" is listed {count} times', "list each pair once",
                              severity="warning", code="duplicate")
        yield from self._dependency_findings()

    def _implements_findings(self) -> Iterator[Finding]:
        for request, count in Counter(self.implements).items():
            if count > 1:
                yield Finding(("implements",), f'"{request}" is listed {count} times', "list each request once",
                              severity="warning", code="duplicate")
        if self.decide is not None and "decide" not in self.implements:
            yield Finding(("decide",), '"decide" settings, but "implements" does not list "decide"',
                          'add "decide" to "implements", or remove "decide"', code="unused")

    def _dependency_findings(self) -> Iterator[Finding]:
        if self.dependencies is None:
            if self.dependency_class is not None:
                yield Finding(("dependency_class",),
                              f'declares "{self.dependency_class}" but has no "dependencies" list to derive it from',
                              'list the dependencies, or write "dependencies": [] if there are none (class S)',
                              code="undeclared-dependencies")
            else:
                yield Finding((), 'dependency class undeclared: method.json has no "dependencies" list',
                              'list the dependencies, or write "dependencies": [] if there are none (class S)',
                              severity="warning", code="undeclared-dependencies")
            return
        seen: dict[str, int] = {}
        for i, dep in enumerate(self.dependencies):
            if dep.id in seen:
                yield Finding(("dependencies", i, "id"), f'dependency id "{dep.id}" is already used by '
                              f"$.dependencies[{seen[dep.id]}]", "give each dependency its own id",
                              code="duplicate")
            seen.setdefault(dep.id, i)
        if any(f.severity == "error" for dep in self.dependencies for f in dep.findings()):
            return  # the class cannot be derived until those dependencies are fixed
        derived = self.derivation()
        assert derived.dependency_class is not None
        if self.dependency_class is None:
            yield Finding(("dependency_class",), f'dependency class not declared; derived "{derived.dependency_class}"',
                          f'add "dependency_class": "{derived.dependency_class}"', severity="warning",
                          code="undeclared-class")
        elif self.dependency_class != derived.dependency_class:
            declared = CLASS_ORDER.index(self.dependency_class)
            offending = [c for c in derived.contributions if CLASS_ORDER.index(c.dependency_class) > declared]
            shown = offending or list(derived.contributions)
            yield Finding(
                ("dependency_class",),
                f'declared "{self.dependency_class}" but the dependencies make it "{derived.dependency_class}": '
                + "; ".join(f"{c.path} ({c.dependency_id}) contributes {c.dependency_class}: {c.reason}"
                            for c in shown),
                f'set "dependency_class": "{derived.dependency_class}", or change the dependencies listed',
                code="class-mismatch",
            )


def _entry_point_findings(entry_point: str) -> Iterator[Finding]:
    module = entry_point.partition(":")[0]
    if ".." in module or "/" in module or "\\" in module:
        yield Finding(("entry_point",), f'entry point "{entry_point}" leaves the plugin directory',
                      'name a module inside the plugin directory, as "module:Class" or "package.module:Class"',
                      code="entry-escapes")
    elif not _ENTRY_POINT.match(entry_point):
        yield Finding(("entry_point",), f'"{entry_point}" is not of the form "module:Class"',
                      'write the Python module (dotted, without ".py") and class, e.g. "pipeline:MyMethod"',
                      code="entry-format")


def _relative_file_findings(at: tuple[str, ...], path: str, suffixes: tuple[str, ...]) -> Iterator[Finding]:
    parts = re.split(r"[\\/]", path)
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) or ".." in parts:
        yield Finding(at, f'"{path}" leaves the plugin directory', "give a path relative to the plugin directory",
                      code="entry-escapes")
    elif not path.endswith(suffixes):
        yield Finding(at, f'"{path}" is not a JavaScript file', f"name a file ending in {', '.join(suffixes)}",
                      code="entry-format")
