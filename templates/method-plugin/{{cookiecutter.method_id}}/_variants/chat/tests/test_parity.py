"""pipeline.py and translate.js behave identically: the same requests reach the endpoint and the same
translations, usage and errors come back, for the sample corpus, awkward sentences and configurations that
fail. Needs ``node`` (>= 20) on PATH, besides the SDK and pytest; the endpoint is the stand-in of conftest.py."""

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
PROBES = ["", "Ünïcode 🙂 — text", "tab\tand\nnewline", "!fail"]
ENTRIES = [*({"id": e["id"], "source": e["source"]} for e in CORPUS),
           *({"id": f"probe-{i}", "source": text} for i, text in enumerate(PROBES, start=1))]


def python_translate(entries: list[dict[str, Any]], config: RunConfig) -> list[dict[str, Any]]:
    return asyncio.run(load_method(PLUGIN).method.translate([dict(e) for e in entries], config))


def test_pipeline_py_and_translate_js_give_the_same_results(endpoint):
    base_url, requests = endpoint
    for config in (RunConfig(source_lang="eng", target_lang="spa", base_url=base_url, model="stand-in", seed=7),
                   RunConfig(source_lang="eng", target_lang="spa", model="stand-in"),  # no base_url: the fix
                   RunConfig(source_lang="eng", target_lang="spa", base_url=base_url)):  # no model
        requests.clear()
        python = python_translate(ENTRIES, config)
        from_python = sorted(requests, key=repr)
        requests.clear()
        node = node_call("translate", ENTRIES, msgspec.to_builtins(config))
        disagreement = differences(python, node, ("id", "predicted", "error", "usage"))
        assert not disagreement, f"pipeline.py and translate.js disagree ({config}):\n{disagreement}"
        assert sorted(requests, key=repr) == from_python, "the two runtimes send different requests"
