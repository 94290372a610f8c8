"""The method card: what the leaderboard shows about a method (what it is, not how it works).

A card is merged from three sources, later ones overriding earlier ones field by field:

1. ``method.json``: method_id, name, class, version, description, author, supported_pairs and the
   dependency class (the derived one when the manifest lists its dependencies);
2. ``method_card.json`` in the plugin directory;
3. the method's own ``method_card()``, when it has one (e.g. to report the model it was built with).

The identity fields ``method_id``, ``class`` and ``dependency_class`` belong to ``method.json``: a card
source may repeat them but not contradict them. The merged card is validated as a whole.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from mt_eval.dependency_classes import DependencyClass
from mt_eval.field_words import SET_BY, described
from mt_eval.manifest import LanguagePair, Manifest, MethodClass, MethodId
from mt_eval.problems import Finding, Problem
from mt_eval.strict import StrictStruct, decode_value, parse_json

Paradigm = Literal["rule-based", "statistical", "neural-nmt", "llm", "hybrid", "human", "unknown"]
CARD_FILE = "method_card.json"
MANIFEST = "method.json"
Url = Annotated[str, msgspec.Meta(extra_json_schema={"format": "uri"})]


class MethodCard(StrictStruct, kw_only=True):
    """``method_card.json`` and the card in every run: the public description of a method."""

    method_id: Annotated[MethodId, described(set_by=MANIFEST)]
    name: Annotated[str, msgspec.Meta(min_length=1)]
    method_class: Annotated[MethodClass, described(what="method class", set_by=MANIFEST)] = msgspec.field(
        name="class")
    version: str | None = None
    description: str | None = None
    author: str | None = None
    paradigm: Annotated[Paradigm, described(what="paradigm")] = "unknown"
    supported_pairs: list[LanguagePair] = msgspec.field(default_factory=list)
    dependency_class: Annotated[DependencyClass, described(what="dependency class", set_by=MANIFEST)] | None = None
    tools_used: list[str] = msgspec.field(default_factory=list)
    open_source: bool | None = None
    open_source_url: Url | None = None
    prompt_published: bool | None = None
    license: Annotated[str, msgspec.Meta(
        description="The method's own licence: SPDX expression, \"proprietary\" or \"none\".")] | None = None
    homepage: Url | None = None
    citation: str | None = None

    def findings(self) -> Iterator[Finding]:
        from mt_eval.licenses import check_licence

        if self.license is not None:
            licence = check_licence(self.license)
            if not licence.ok:
                yield Finding(("license",), licence.message or "invalid licence", licence.hint, code="licence")
        for field in url_fields():
            url = getattr(self, field)
            if url is not None and not url.startswith(("https://", "http://")):
                yield Finding((field,), f'"{url}" is not a web address', "give an http:// or https:// URL",
                              code="url")
        if self.open_source and not self.open_source_url:
            yield Finding(("open_source_url",), "open_source is true but no open_source_url is given",
                          "add the public address of the code", severity="warning", code="missing")


def _marked(t: Any, key: str, value: str) -> bool:
    """Whether a field's type carries the schema keyword ``key: value`` (through Optional)."""
    import msgspec.inspect as mi

    if isinstance(t, mi.Metadata):
        return (t.extra_json_schema or {}).get(key) == value or _marked(t.type, key, value)
    return isinstance(t, mi.UnionType) and any(_marked(member, key, value) for member in t.types)


@functools.cache
def url_fields() -> tuple[str, ...]:
    """Card fields that hold a web address (``"format": "uri"`` in the schema)."""
    import msgspec.inspect as mi

    info = mi.type_info(MethodCard)
    assert isinstance(info, mi.StructType)
    return tuple(f.name for f in info.fields if _marked(f.type, "format", "uri"))


# What to do in method.json for a field a card gives but method.json leaves unset.
UNSET_HINTS = {"dependency_class": ': list the dependencies there, or write "dependencies": [] if there are none '
                                   '(class S), and the class is derived from them'}


@functools.cache
def identity_fields() -> tuple[str, ...]:
    """Card fields only ``method.json`` sets (marked ``x-set-by`` in the schema): method_id, class, dependency_class."""
    import msgspec.inspect as mi

    info = mi.type_info(MethodCard)
    assert isinstance(info, mi.StructType)
    return tuple(f.encode_name for f in info.fields if _marked(f.type, SET_BY, MANIFEST))


@functools.cache
def manifest_card_fields() -> tuple[str, ...]:
    """The card fields ``method.json`` supplies: those both Structs define."""
    manifest = set(Manifest.__struct_encode_fields__)
    return tuple(name for name in MethodCard.__struct_encode_fields__ if name in manifest)


def card_from_manifest(manifest: Manifest, method_id: str) -> dict[str, Any]:
    """The card fields that ``method.json`` supplies (the lowest-precedence source)."""
    written = msgspec.to_builtins(manifest)
    fields: dict[str, Any] = {name: written.get(name) for name in manifest_card_fields()}
    fields["method_id"] = method_id
    fields["class"] = manifest.method_class
    fields["supported_pairs"] = list(manifest.supported_pairs)
    fields["dependency_class"] = manifest.derivation().dependency_class or manifest.dependency_class
    return {k: v for k, v in fields.items() if v is not None}


def read_card_file(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    """A plugin's ``method_card.json``: what it holds (None when there is none, when that is no JSON object, or it
    cannot be read), and its problems."""
    if not path.is_file():  # (there, but no file: it was taken for no card, and not checked)
        return None, [unreadable] if (unreadable := not_a_file(path)) else []
    try:
        parsed, problems = parse_json(path.read_bytes(), file=str(path))
    except OSError as exc:
        return None, [Problem(file=str(path), path="$", code="io", message=f"cannot read file: {exc.strerror or exc}")]
    if parsed is not None and not isinstance(parsed, dict):
        problems.append(Problem(file=str(path), path="$", message="a method card must be a JSON object", code="type"))
    return (parsed if isinstance(parsed, dict) else None), problems


def not_a_file(path: Path) -> Problem | None:
    """``path`` (a plugin's method.json or method_card.json) is there, but no file to read: a directory, a FIFO, a
    link that loops or leads nowhere. None when it is a file, or nothing."""
    if path.is_file() or not (path.exists() or path.is_symlink()):
        return None
    link = not path.exists()
    what = (f"a link to {os.readlink(path)}, which is not a file" if link
            else "a directory, not a file" if path.is_dir() else "not a regular file (a FIFO, socket or device)")
    return Problem(file=str(path), path="$", message=what, code="io", hint=("point the link at a file, or " if link
                   else "") + f"put the plugin's {path.name} (a JSON file) itself in its place")


def not_a_card(source: str, data: Any) -> Problem | None:
    """The problem with a card source (``source`` names it) that is not an object, or None when it is one (or none):
    the words of both reference guests for a ``method_card()`` that returns no card (Node's ``notACard``)."""
    if data is None or isinstance(data, dict):
        return None
    return Problem(file=source, path="$", message=f"a method card must be an object, got {type(data).__name__}",
                   hint="return or write a JSON object", code="type")


def merge_card(
    manifest: Manifest,
    method_id: str,
    sources: Mapping[str, Any],
    *,
    manifest_file: str = "method.json",
) -> tuple[MethodCard | None, list[Problem]]:
    """Merge card sources (name → parsed object, in precedence order) over the manifest's fields.

    Each problem names the source that supplied the offending field.
    """
    base = card_from_manifest(manifest, method_id)
    merged = dict(base)
    origin = dict.fromkeys(base, manifest_file)
    problems: list[Problem] = []
    for source, data in sources.items():
        if data is None:
            continue
        if (not_an_object := not_a_card(source, data)) is not None:
            problems.append(not_an_object)
            continue
        for key in identity_fields():
            if key in data and key in base and data[key] != base[key]:
                problems.append(Problem(
                    file=source, path=f"$.{key}",
                    message=f'says {msgspec.json.encode(data[key]).decode()} but {manifest_file} says '
                            f'{msgspec.json.encode(base[key]).decode()}',
                    hint=f'remove "{key}" here or make it match; {manifest_file} is where it is set',
                    code="card-conflict"))
            elif data.get(key) is not None and key not in base:  # (only the dependency class can be left unset)
                problems.append(Problem(
                    file=source, path=f"$.{key}",
                    message=f'says {msgspec.json.encode(data[key]).decode()} but {manifest_file} sets no "{key}"',
                    hint=f'remove "{key}" here; {manifest_file} is where it is set'
                         + UNSET_HINTS.get(key, ""),
                    code="card-conflict"))
        for key, value in data.items():
            if key in identity_fields() and key in base:
                continue
            merged[key] = value
            origin[key] = source
    card, found = decode_value(merged, MethodCard, file=manifest_file)
    # a field no source gave (a required one, one a rule asks for) is for the card given last to add, if any
    adds_missing = next((name for name, data in reversed(list(sources.items())) if isinstance(data, dict)),
                        manifest_file)
    for problem in found:
        problems.append(msgspec.structs.replace(problem, file=origin.get(_top_key(problem.path), adds_missing)))
    errors = any(p.severity == "error" for p in problems)
    return (None if errors else card), problems


def _top_key(path: str) -> str:
    """The top-level key a problem's JSON path starts with: ``$.a.b`` and ``$.a[0]``: a; ``$["open-source"]``:
    open-source."""
    quoted = _QUOTED_KEY.match(path)
    if quoted:
        key = msgspec.json.decode(quoted.group(1))  # (a JSON string: the walker wrote it)
        return key if isinstance(key, str) else ""
    return path.removeprefix("$.").split(".")[0].split("[")[0]


_QUOTED_KEY = re.compile(r'^\$\[("(?:[^"\\]|\\.)*")\]')


IDENTITY_FIELDS: tuple[str, ...] = identity_fields()  # method_id, class, dependency_class
