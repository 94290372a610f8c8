"""pipeline.py and decide.js behave identically: the sample rows, and rows that catch where two implementations
drift apart (no reference, accents, an empty state), get the same probabilities from both. Needs ``node``
(>= 20) on PATH, besides the SDK and pytest."""

from __future__ import annotations

import asyncio
import json

import msgspec
from node_side import PLUGIN, differences, node_call

from mt_eval.decisions.records import DecisionConfig
from mt_eval.loader import load_method

SAMPLE = [json.loads(line) for line in (PLUGIN / "sample" / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]
QUESTIONS = SAMPLE[0]["questions"]
ROWS = [*({k: v for k, v in row.items() if k != "gold"} for row in SAMPLE),
        {"id": "probe-1", "state": {"source": "one two", "candidate": "uno"}, "questions": QUESTIONS},
        {"id": "probe-2", "state": {"source": "Ünïcode!", "candidate": "ÜNÏCODE", "reference": "ünïcode"},
         "questions": QUESTIONS},
        {"id": "probe-3", "state": {}, "questions": QUESTIONS}]


def test_pipeline_py_and_decide_js_give_the_same_answers():
    config = DecisionConfig()
    python = asyncio.run(load_method(PLUGIN).method.decide([dict(r) for r in ROWS], config))
    node = node_call("decide", ROWS, msgspec.to_builtins(config))
    disagreement = differences(python, node, ("id", "answers", "error"))
    assert not disagreement, f"pipeline.py and decide.js disagree:\n{disagreement}"
