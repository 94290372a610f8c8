"""Corpora with families and runs of the scripted method, for the tests of the gate, families, latency,
freeze manifests and compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard

HERE = Path(__file__).parent
SCRIPTED = HERE / "fixtures" / "methods"  # copies the source; see its params


def family_corpus(path: Path, *, scored: int = 30, canaries: int = 2, negatives: int = 2,
                  extra: list[dict[str, Any]] | None = None, dataset: dict[str, Any] | None = None) -> Path:
    """``scored`` entries, canaries (exact match) and negative controls with empty sources."""
    entries: list[dict[str, Any]] = [{"id": f"s{i:02d}", "source": f"Sentence number {i}.",
                                      "reference": f"Frase número {i}."} for i in range(scored)]
    entries += [{"id": f"c{i}", "family": "canary", "pass_rule": "exact", "source": f"Canary {i}.",
                 "reference": f"Canario {i}."} for i in range(canaries)]
    entries += [{"id": f"n{i}", "family": "negative", "source": ""} for i in range(negatives)]
    entries += extra or []
    path.write_text(json.dumps({"dataset": {"name": path.stem, "license": "CC0-1.0", "source": "written for tests",
                                            **(dataset or {})},
                                "language_pair": {"source": "eng", "target": "spa"}, "entries": entries}),
                    encoding="utf-8")
    return path


def params(**values: object) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--param", f"{key}={json.dumps(value)}")]


def honest(canaries: int = 2, negatives: int = 2, **more: Any) -> list[str]:
    """Params that make the scripted method pass the canaries of `family_corpus` and abstain on its negative
    controls (``more`` adds or overrides params)."""
    values: dict[str, Any] = {"translate": {f"Canary {i}.": f"Canario {i}." for i in range(canaries)},
                              "abstain": [f"n{i}" for i in range(negatives)], **more}
    return params(**values)


def run(out: Path, corpus: Path, *args: str, method: Path = SCRIPTED) -> tuple[int, RunCard | None]:
    """``mt-eval run`` of ``method`` (the scripted one) on ``corpus``; the card when one was written."""
    code = main(["run", "--method", str(method), "--corpus", str(corpus), "--out", str(out), "--quiet",
                 "--resamples", "100", *args])
    card_path = out / "card.json"
    card = msgspec.json.decode(card_path.read_bytes(), type=RunCard) if card_path.exists() else None
    return code, card


def edit_card(path: Path, change: Any, *, name: str = "edited.json", reseal: bool = True) -> Path:
    from mt_eval.harness.verify import canonical_sha256

    data = json.loads(path.read_text())
    change(data)
    if reseal:
        data["content_sha256"] = canonical_sha256(data)
    out = path.parent / name
    out.write_text(json.dumps(data, indent=2))
    return out
