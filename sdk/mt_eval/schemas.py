"""JSON Schemas generated from the msgspec Structs, checked in under ``bridge/schemas/``, and the Node
package's copy of them.

The Structs are the source of truth. `mt-eval schemas bridge/schemas` regenerates the schema files and,
in the Node package beside them (``bridge/node/lib/generated/``), what the Node side validates with
(`mt_eval.node_contract`); `mt-eval schemas --check bridge/schemas` (run by the tests) fails when any of
them has drifted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi

from mt_eval import field_words
from mt_eval.errors import ExpectedError

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://mt-eval.dev/schemas/"
# Schemas of files that name only what they change: every field may be left out (its value comes from elsewhere).
FILES_OVER_DEFAULTS = {
    "gate-policy": "A gate policy file (--policy FILE): it names only what it changes; every threshold left out is "
                   "the shipped policy's (mt_eval/harness/policies/default.json), and the name is the file's.",
}


def schema_types() -> dict[str, Any]:
    """Schema file stem → Struct."""
    from mt_eval.bridge.messages import ErrorObject, InitializeResult
    from mt_eval.champollion.config import ChampollionConfigFile
    from mt_eval.decisions.card import DecisionCard
    from mt_eval.decisions.grading_card import GradingCard
    from mt_eval.decisions.records import DecisionCase, DecisionConfig, DecisionResult, DecisionRow
    from mt_eval.decisions.rubric import Rubric
    from mt_eval.harness.freeze import FreezeManifest
    from mt_eval.harness.policy import GatePolicy
    from mt_eval.harness.runcard import RunCard
    from mt_eval.manifest import Dependency, Manifest
    from mt_eval.method_card import MethodCard
    from mt_eval.records import CorpusEntry, RunConfig, TranslationResult
    from mt_eval.validate import ValidateReport

    return {
        "method": Manifest,
        "dependency": Dependency,
        "method-card": MethodCard,
        "corpus-entry": CorpusEntry,
        "translation-result": TranslationResult,
        "run-config": RunConfig,
        "run-card": RunCard,
        "gate-policy": GatePolicy,
        "freeze": FreezeManifest,
        "bridge-initialize-result": InitializeResult,
        "bridge-error": ErrorObject,
        "champollion-config": ChampollionConfigFile,
        "validate-report": ValidateReport,
        "decision-row": DecisionRow,
        "decision-case": DecisionCase,
        "decision-result": DecisionResult,
        "decision-config": DecisionConfig,
        "decision-card": DecisionCard,
        "grading-card": GradingCard,
        "rubric": Rubric,
    }


def schema_document(stem: str, type_: Any) -> dict[str, Any]:
    """The schema of one Struct, with the ``x-unknown-fields`` keyword on Structs that warn about them."""
    from mt_eval.strict import unknown_fields_are

    body = msgspec.json.schema(type_)
    structs = {t.cls.__name__: t.cls for t in _struct_types(mi.type_info(type_))}
    for name, definition in body.get("$defs", {}).items():
        cls = structs.get(name)
        if cls is not None and unknown_fields_are(cls) == "warning":
            definition[field_words.UNKNOWN_FIELDS] = "warning"
        if name in structs:
            _keep_optional_struct_descriptions(structs[name], definition)
    if stem in FILES_OVER_DEFAULTS:
        top = body["$defs"][type_.__name__]
        top.pop("required", None)
        top["description"] = FILES_OVER_DEFAULTS[stem]
    return {"$schema": DRAFT, "$id": f"{ID_BASE}{stem}.schema.json", "title": type_.__name__, **body}


def _keep_optional_struct_descriptions(cls: type[Any], definition: dict[str, Any]) -> None:
    """Put back the description of an optional Struct field (``Annotated[S, Meta(description=...)] | None``),
    which msgspec's generator drops with the ``$ref``: Node's fixes are read from it."""
    properties = definition.get("properties", {})
    for field in mi.type_info(cls).fields:  # type: ignore[attr-defined]
        members = field.type.types if isinstance(field.type, mi.UnionType) else ()
        for member in members:
            if isinstance(member, mi.Metadata) and isinstance(member.type, mi.StructType):
                described = (member.extra_json_schema or {}).get("description")
                if described and "description" not in properties.get(field.encode_name, {"description": None}):
                    properties[field.encode_name]["description"] = described


def _struct_types(t: mi.Type, seen: set[type[Any]] | None = None) -> list[mi.StructType]:
    seen = set() if seen is None else seen
    found: list[mi.StructType] = []
    if isinstance(t, mi.StructType):
        if t.cls in seen:
            return found
        seen.add(t.cls)
        found.append(t)
        for field in t.fields:
            found += _struct_types(field.type, seen)
    elif isinstance(t, mi.Metadata):
        found += _struct_types(t.type, seen)
    elif isinstance(t, mi.UnionType):
        for member in t.types:
            found += _struct_types(member, seen)
    elif isinstance(t, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        found += _struct_types(t.item_type, seen)
    elif isinstance(t, mi.DictType):
        found += _struct_types(t.value_type, seen)
    return found


def render_schema(stem: str, type_: Any) -> str:
    """The schema document for one Struct, as the exact text written to disk."""
    return json.dumps(schema_document(stem, type_), indent=2, ensure_ascii=False) + "\n"


def node_directory(schemas: Path) -> Path:
    """The Node package beside a schema directory (``bridge/schemas`` → ``bridge/node``)."""
    return schemas.resolve().parent / "node"


def expected_files(directory: Path, node: Path | None) -> dict[Path, str]:
    """Every generated file and its text: the schemas, and the Node package's files when ``node`` is given."""
    files = {directory / f"{stem}.schema.json": render_schema(stem, t) for stem, t in schema_types().items()}
    if node is not None:
        from mt_eval.node_contract import node_files

        documents = {stem: schema_document(stem, t) for stem, t in schema_types().items()}
        files.update({node / relative: text for relative, text in node_files(documents, struct_modules()).items()})
    return files


def struct_modules() -> dict[str, str]:
    """The name of each Struct the schemas define → the module defining it; two Structs of one name are refused:
    the TypeScript types declare each name once, so one of them would be typed as the other."""
    structs: dict[str, type[Any]] = {}
    for type_ in schema_types().values():
        for struct in _struct_types(mi.type_info(type_)):
            first = structs.setdefault(struct.cls.__name__, struct.cls)
            if first is not struct.cls:
                raise ExpectedError(f"two Structs are named {first.__name__} ({first.__module__} and "
                                    f"{struct.cls.__module__}): the TypeScript types would type one as the other; "
                                    "rename one after its concept (as DecisionFailure is the decision card's)")
    return {name: cls.__module__ for name, cls in structs.items()}


def write_schemas(directory: Path, node: Path | None = None) -> list[Path]:
    written = []
    for path, text in expected_files(directory, node).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def drifted_schemas(directory: Path, node: Path | None = None) -> list[str]:
    """Generated files that are missing, stale, or (schemas) no longer generated."""
    from mt_eval.node_contract import LICENCES, same_licence_source

    expected = expected_files(directory, node)
    drift = []
    for path, text in expected.items():
        if not path.is_file():
            drift.append(f"{path}: missing")
        elif path.read_text(encoding="utf-8") != text:
            if path.name == LICENCES and not same_licence_source(path, text):
                continue  # written from another license-expression release: regenerate to update it
            drift.append(f"{path}: differs from the Struct it is generated from")
    drift.extend(f"{p}: {STRAY}" for p in stray_schemas(directory, expected, node))
    return drift


STRAY = "not generated from any Struct: remove it (regenerating leaves it there)"


def stray_schemas(directory: Path, expected: dict[Path, str] | None = None, node: Path | None = None) -> list[Path]:
    """The ``*.schema.json`` files in ``directory``, and (given ``node``) the files of the Node package's generated
    folder, that nothing generates any more (a Struct renamed or removed, a file of an older layout)."""
    from mt_eval.node_contract import GENERATED

    expected = expected_files(directory, node) if expected is None else expected
    found = sorted(directory.glob("*.schema.json"))
    if node is not None:
        found += sorted(p for p in (node / GENERATED).rglob("*") if p.is_file())
    return [p for p in found if p not in expected]
