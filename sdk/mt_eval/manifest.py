"""``method.json``: the plugin manifest and its dependency entries.

Defaults for a seed-era manifest that has only ``name`` and ``entry_point``:
``method_id`` is the plugin directory's name (kebab-cased), ``class`` is ``custom-plugin``,
``supported_pairs`` is empty (any pair), ``implements`` is ``["translate"]`` and the dependency class is
*undeclared* (a warning).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import msgspec

from mt_eval.decisions.records import QUESTION_TYPES, QuestionType
from mt_eval.dependency_classes import CLASS_ORDER, DependencyClass, Derivation, derive
from mt_eval.field_words import described, kebab_case
from mt_eval.js_text import js_string
from mt_eval.problems import Finding
from mt_eval.strict import StrictStruct

__all__ = ["Dependency", "LanguagePair", "Manifest", "MethodClass", "MethodId", "kebab_case"]

MethodClass = Literal["raw-llm", "coached-llm", "pipeline", "custom-plugin", "api", "human"]
Request = Literal["translate", "decide"]
DependencyKind = Literal["data", "model", "software", "service"]
Access = Literal["bundled", "mirrored", "gateway", "external-api"]

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"
PAIR = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*>[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
_ENTRY_POINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
_SHA256_PIN = re.compile(r"sha256:[0-9a-f]{64}", re.IGNORECASE)  # (SHA256:HEX is the same pin)

MethodId = Annotated[str, described(
    pattern=KEBAB, description="Stable identifier: lowercase letters and digits in words joined by hyphens.",
    pattern_means="kebab-case", hint="use lowercase words joined by hyphens", suggest="kebab-case")]
LanguagePair = Annotated[str, described(
    pattern=PAIR, description='A source>target language pair in ISO 639 codes, e.g. "eng>spa".',
    pattern_means='a "source>target" language pair',
    hint='write the pair as "source>target" with ISO 639 codes, e.g. "eng>spa"', suggest="language-pair")]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class Dependency(StrictStruct, kw_only=True):
    """One thing a method needs that is not its own code (the rules: `mt_eval.dependency_classes`)."""

    id: Annotated[str, msgspec.Meta(min_length=1, description="Short name, unique within the manifest.")]
    kind: Annotated[DependencyKind, described(what="dependency kind")]
    license: Annotated[str, msgspec.Meta(
        min_length=1, description='SPDX licence expression, "proprietary", or "none" when there is no licence.')]
    access: Annotated[Access, described(
        what="access",
        description="How a run reaches it: bundled in the plugin, mirrored (a pinned copy), through a "
                    "gateway (an endpoint any equivalent provider can serve), or an external API.")]
    source: Annotated[str, msgspec.Meta(
        min_length=1, description="Where it comes from: a URL, a package (deb:NAME, pypi:NAME, npm:NAME) or a "
                                  "path in the plugin directory.")]
    redistributable: Annotated[bool, msgspec.Meta(
        description="Does its licence let anyone redistribute it (publish a copy)?")]
    transferable: Annotated[bool, msgspec.Meta(
        description="Does its licence let it be handed over with the method (e.g. to an evaluator)?")]
    pin: Annotated[str, msgspec.Meta(
        min_length=1, description="mirrored: the exact version, commit, or sha256:HEX of the copy.")] | None = None
    substitutable: Annotated[bool, msgspec.Meta(
        description="gateway: can any equivalent endpoint serve it? (an external-api is A2 either way)")] | None = None
    notes: str | None = None

    def findings(self) -> Iterator[Finding]:
        from mt_eval.licenses import NONE, PROPRIETARY, check_licence

        licence = check_licence(self.license)
        if not licence.ok:
            yield Finding(("license",), licence.message or "invalid licence", licence.hint, code="licence")
        if self.access == "mirrored" and not self.pin:
            yield Finding(("pin",), 'a "mirrored" dependency needs "pin"',
                          'add "pin": the exact version, commit or sha256:HEX of the copy you mirror',
                          code="missing-pin")
        if self.pin and self.pin.lower().startswith("sha256:") and not _SHA256_PIN.fullmatch(self.pin):
            yield Finding(("pin",), f'"{self.pin}" is not a SHA-256 pin',
                          'write "sha256:" and the 64 hex digits of the artifact\'s SHA-256', code="pin-format")
        if self.access == "gateway" and self.substitutable is None:
            yield Finding(("substitutable",), 'a "gateway" dependency needs "substitutable"',
                          'add "substitutable": true if any equivalent endpoint can serve it, else false',
                          code="missing-substitutable")
        if self.redistributable and self.license in (NONE, PROPRIETARY):
            yield Finding(("redistributable",), f'"redistributable": true contradicts licence "{self.license}"',
                          "give the SPDX licence that allows redistribution, or set redistributable to false",
                          code="contradiction")
        elif self.redistributable and licence.restriction and self.access in ("bundled", "mirrored"):
            yield Finding(("redistributable",),
                          f'"redistributable": true contradicts licence "{self.license}": a '
                          f"{licence.restriction} licence does not let everyone redistribute it, which a "
                          f'"{self.access}" dependency relies on',
                          "set redistributable to false (the dependency then contributes X), or use a licence "
                          "that allows redistribution", code="contradiction")
        if self.transferable and self.license == NONE:
            yield Finding(("transferable",), '"transferable": true contradicts licence "none"',
                          "give the licence that allows handing it over, or set transferable to false",
                          code="contradiction")
        if self.pin and self.access != "mirrored":
            yield Finding(("pin",), f'"pin" has no effect on a "{self.access}" dependency',
                          'remove "pin", or set "access": "mirrored"', severity="warning", code="unused")
        if self.substitutable is not None and self.access in ("bundled", "mirrored"):
            yield Finding(("substitutable",), f'"substitutable" has no effect on a "{self.access}" dependency',
                          'remove "substitutable"', severity="warning", code="unused")


AnsweredType = Annotated[QuestionType, described(what="question type")]


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
    method_class: Annotated[MethodClass, described(what="method class")] = msgspec.field(
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
    implements: Annotated[list[Annotated[Request, described(what="request")]], msgspec.Meta(
        min_length=1, description='What the method answers: "translate" (translate(entries, config)), "decide" '
                                  '(decide(rows, config)) or both. Default: ["translate"].',
        extra_json_schema={"default": ["translate"]})] = msgspec.field(default_factory=lambda: ["translate"])
    decide: Annotated[DecideSpec, msgspec.Meta(
        description='A decision method\'s question types and input limit (with "decide" in implements).')
    ] | None = None
    dependency_class: Annotated[DependencyClass, described(what="dependency class")] | None = None
    dependencies: list[Dependency] | None = None
    metadata: Annotated[dict[str, Any], msgspec.Meta(
        description="Anything else about the method, kept as written (not part of the card).")] | None = None

    def derivation(self) -> Derivation:
        return derive(self.dependencies)

    def entry_in_words(self) -> str:
        """What the method runs, as a message names it: its Node entry, Python entry point or command."""
        return self.node_entry or self.entry_point or " ".join(self.command or [])

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
                yield Finding(("dependencies", i, "id"), f"dependency id {js_string(dep.id)} is already used by "
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
                + ("; ".join(f"{c.path} ({c.dependency_id}) contributes {c.dependency_class}: {c.reason}"
                             for c in shown) or '"dependencies": [] says the method needs nothing but its own files'),
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
