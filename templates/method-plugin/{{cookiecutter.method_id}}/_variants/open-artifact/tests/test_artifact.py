"""The mirrored glossary: used from ``config.params["artifact_path"]`` and only when its sha256 matches the pin."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from mt_eval.loader import load_method
from mt_eval.records import RunConfig

PLUGIN = Path(__file__).resolve().parent.parent
ENTRIES = [{"id": "a", "source": "Thank you for the book."}, {"id": "b", "source": "The cat drinks water."}]


def glossary_dependency() -> dict[str, Any]:
    manifest = json.loads((PLUGIN / "method.json").read_text(encoding="utf-8-sig"))
    return next(d for d in manifest["dependencies"] if d["id"] == "glossary")


def translate(**params: Any) -> list[dict[str, Any]]:
    config = RunConfig(source_lang="eng", target_lang="spa", params=params)
    return asyncio.run(load_method(PLUGIN).method.translate(ENTRIES, config))


def test_the_sample_copy_is_the_pinned_artifact():
    dependency = glossary_dependency()
    assert dependency["access"] == "mirrored"
    assert dependency["pin"] == "sha256:" + hashlib.sha256((PLUGIN / "glossary.tsv").read_bytes()).hexdigest()


def test_a_mirror_copy_given_by_artifact_path_is_used(tmp_path: Path):
    mirror = tmp_path / "mirror" / "glossary.tsv"
    mirror.parent.mkdir()
    shutil.copyfile(PLUGIN / "glossary.tsv", mirror)
    results = translate(artifact_path=str(mirror))
    assert [r["predicted"] for r in results] == ["Gracias por el libro.", "El gato bebe agua."]


def test_an_artifact_that_differs_from_the_pin_is_refused_for_every_entry(tmp_path: Path):
    changed = tmp_path / "glossary.tsv"
    changed.write_bytes((PLUGIN / "glossary.tsv").read_bytes() + b"cat\tgatito\n")
    results = translate(artifact_path=str(changed))
    assert [r["predicted"] for r in results] == [None, None]
    assert all("but method.json pins" in r["error"] and str(changed) in r["error"] for r in results)


def test_a_missing_artifact_is_a_per_entry_error(tmp_path: Path):
    results = translate(artifact_path=str(tmp_path / "absent.tsv"))
    assert [r["error"] for r in results] == [f"cannot read the glossary {tmp_path / 'absent.tsv'}: no such file"] * 2
