"""JSON Schemas generated from the msgspec Structs, checked in under ``bridge/schemas/``.

The Structs are the source of truth; `mt-eval schemas --out bridge/schemas` regenerates the files and
`mt-eval schemas --check bridge/schemas` (run by the tests) fails when they have drifted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://mt-eval.dev/schemas/"


def schema_types() -> dict[str, Any]:
    """Schema file stem → Struct."""
    from mt_eval.bridge.messages import ErrorObject, InitializeResult
    from mt_eval.card import MethodCard
    from mt_eval.decisions.card import DecisionCard
    from mt_eval.decisions.grading_card import GradingCard
    from mt_eval.decisions.records import DecisionCase, DecisionConfig, DecisionResult, DecisionRow
    from mt_eval.decisions.rubric import Rubric
    from mt_eval.harness.freeze import FreezeManifest
    from mt_eval.harness.policy import GatePolicy
    from mt_eval.harness.runcard import RunCard
    from mt_eval.manifest import Dependency, Manifest
    from mt_eval.records import CorpusEntry, RunConfig, TranslationResult

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
        "decision-row": DecisionRow,
        "decision-case": DecisionCase,
        "decision-result": DecisionResult,
        "decision-config": DecisionConfig,
        "decision-card": DecisionCard,
        "grading-card": GradingCard,
        "rubric": Rubric,
    }


def render_schema(stem: str, type_: Any) -> str:
    """The schema document for one Struct, as the exact text written to disk."""
    body = msgspec.json.schema(type_)
    doc = {"$schema": DRAFT, "$id": f"{ID_BASE}{stem}.schema.json", "title": type_.__name__, **body}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, type_ in schema_types().items():
        path = directory / f"{stem}.schema.json"
        path.write_text(render_schema(stem, type_), encoding="utf-8")
        written.append(path)
    return written


def drifted_schemas(directory: Path) -> list[str]:
    """Schema files that are missing, stale, or no longer generated."""
    expected = {f"{stem}.schema.json": render_schema(stem, t) for stem, t in schema_types().items()}
    drift = []
    for name, text in expected.items():
        path = directory / name
        if not path.is_file():
            drift.append(f"{path}: missing")
        elif path.read_text(encoding="utf-8") != text:
            drift.append(f"{path}: differs from the Struct it is generated from")
    drift.extend(f"{p}: not generated from any Struct" for p in sorted(directory.glob("*.schema.json"))
                 if p.name not in expected)
    return drift
