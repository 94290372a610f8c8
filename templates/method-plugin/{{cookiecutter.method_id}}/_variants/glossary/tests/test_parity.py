"""pipeline.py and translate.js behave identically: the sample corpus, and sentences that catch where two
implementations drift apart (capitals, punctuation, accents, emoji, line breaks, empty text), go through both,
and every prediction must be the same. Needs ``node`` (>= 20) on PATH, besides the SDK and pytest."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from node_side import PLUGIN, differences, node_call

from mt_eval.loader import load_method
from mt_eval.records import RunConfig

CORPUS = [json.loads(line) for line in (PLUGIN / "sample" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]
PROBES = ["The house and the city, please!", "THE CAT drinks WATER", "The... house?", "", "Ünïcode cat 🙂 — a dog",
          "i read every day; the water", "don't stop", "tab\tthe\ncat", "  the  house  "]
ENTRIES = [*({"id": e["id"], "source": e["source"]} for e in CORPUS),
           *({"id": f"probe-{i}", "source": text} for i, text in enumerate(PROBES, start=1))]


def python_translate(entries: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]:
    return asyncio.run(load_method(PLUGIN).method.translate([dict(e) for e in entries], config))


def test_pipeline_py_and_translate_js_give_the_same_translations():
    config = RunConfig(source_lang="eng", target_lang="spa")
    python = python_translate(ENTRIES, config)
    node = node_call("translate", ENTRIES, msgspec.to_builtins(config))
    disagreement = differences(python, node, ("id", "predicted", "error"))
    assert not disagreement, f"pipeline.py and translate.js disagree:\n{disagreement}"
