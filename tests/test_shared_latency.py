"""A translate answer's shared latency: a host that asks for it at initialize (``shared_latency``) gets each
result's share of the call's time once, as the answer's ``latency_s``, instead of in every result; each result
still ends with its latency, whichever guest answered."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from guest_lines import by_id, guest_replies
from mt_eval.bridge.answers import match_results
from mt_eval.bridge.connection import GuestConnection, HostOptions
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command
from mt_eval.results import ResultNotes

CONFIG = {"source_lang": "eng", "target_lang": "spa"}
NODE = shutil.which("node")
FAST = HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1)

PYTHON_METHOD = """
import time

class Method:
    async def translate(self, entries, config):
        time.sleep(0.003)
        out = []
        for e in entries:
            if e["source"] == "zero":
                out.append({"id": e["id"], "predicted": "z", "latency_s": 0})
            elif e["source"] == "own":
                out.append({"id": e["id"], "predicted": "o", "latency_s": 1.5})
            else:
                out.append({"id": e["id"], "predicted": e["source"].upper()})
        return out
"""
NODE_METHOD = """
export async function translate(entries) {
  const until = performance.now() + 3;
  while (performance.now() < until) { /* time to share */ }
  return entries.map((e) => e.source === 'zero' ? { id: e.id, predicted: 'z', latency_s: 0 }
    : e.source === 'own' ? { id: e.id, predicted: 'o', latency_s: 1.5 }
      : { id: e.id, predicted: e.source.toUpperCase() });
}
"""


def plugin(tmp_path: Path, runtime: str) -> Path:
    directory = tmp_path / f"shares-{runtime}"
    directory.mkdir()
    if runtime == "python":
        (directory / "pipeline.py").write_text(PYTHON_METHOD)
        manifest = {"name": "Shares", "entry_point": "pipeline:Method", "dependencies": []}
    else:
        (directory / "translate.js").write_text(NODE_METHOD)
        manifest = {"name": "Shares", "node_entry": "translate.js", "dependencies": []}
    (directory / "method.json").write_text(json.dumps(manifest))
    return directory


def command(directory: Path, runtime: str) -> list[str]:
    return python_command(directory) if runtime == "python" else node_command(directory)


RUNTIMES = ["python", pytest.param("node", marks=pytest.mark.skipif(NODE is None, reason="node is not installed"))]


def answers(tmp_path: Path, runtime: str, initialize: dict[str, Any], *sources: list[str]) -> list[dict[str, Any]]:
    """The guest's answers to one translate request per list of sources, the requests read from a file."""
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocol_versions": ["mt-eval-bridge/1"], **initialize}}]
    lines += [{"jsonrpc": "2.0", "id": n, "method": "translate", "params": {
        "entries": [{"id": f"e{i}", "source": s} for i, s in enumerate(batch)], "config": CONFIG}}
        for n, batch in enumerate(sources, 1)]
    replies = by_id(guest_replies(command(plugin(tmp_path, runtime), runtime), lines, tmp_path))
    return [replies[n]["result"] for n in range(1, len(sources) + 1)]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_guest_sends_the_share_once_to_a_host_that_asked_and_in_every_result_otherwise(tmp_path, runtime):
    shared, alone = answers(tmp_path, runtime, {"shared_latency": True}, ["a", "b", "c"], ["a"])
    assert shared["latency_s"] > 0
    assert shared["results"] == [{"id": "e0", "predicted": "A"}, {"id": "e1", "predicted": "B"},
                                 {"id": "e2", "predicted": "C"}]
    assert "latency_s" not in alone  # one result: nothing to share
    assert alone["results"][0]["latency_s"] > 0
    (tmp_path / "again").mkdir()
    each, = answers(tmp_path / "again", runtime, {}, ["a", "b", "c"])
    assert "latency_s" not in each
    latencies = {result["latency_s"] for result in each["results"]}
    assert len(latencies) == 1 and latencies.pop() > 0


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_result_that_states_zero_latency_makes_every_result_carry_its_own(tmp_path, runtime):
    """A host gives the answer's latency to each result at 0, the default a guest leaves out: a method that says
    a result took no time (a cached one, say) keeps that only if the answer does not share."""
    own, zero = answers(tmp_path, runtime, {"shared_latency": True}, ["a", "own"], ["a", "zero"])
    assert own["latency_s"] > 0
    assert own["results"] == [{"id": "e0", "predicted": "A"}, {"id": "e1", "predicted": "o", "latency_s": 1.5}]
    assert "latency_s" not in zero
    assert zero["results"][0]["latency_s"] > 0
    assert zero["results"][1] == {"id": "e1", "predicted": "z"}  # (0, the default, is left out)


def _raw(answer: dict[str, Any]) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(answer))


BATCH = [{"id": "a", "source": "x"}, {"id": "b", "source": "y"}]


def test_the_host_gives_the_answers_latency_to_each_result_without_one_of_its_own():
    matched = match_results(BATCH, _raw({"results": [{"id": "a", "predicted": "X"},
                                                     {"id": "b", "predicted": "Y", "latency_s": 2.0}],
                                         "latency_s": 0.25}), "g")
    assert [r["latency_s"] for r in matched] == [0.25, 2.0]
    out_of_order = match_results(BATCH, _raw({"results": [{"id": "b", "predicted": "Y"}, {"id": "a", "predicted": "X"}],
                                              "latency_s": 0.25}), "g")
    assert [(r["id"], r["latency_s"]) for r in out_of_order] == [("a", 0.25), ("b", 0.25)]


def test_the_answers_latency_reaches_the_results_of_an_answer_read_item_by_item():
    """An answer that does not decode in one step (here a result in the upstream harness's shape) still shares."""
    notes = ResultNotes()
    matched = match_results(BATCH, _raw({"results": [{"id": "a", "predicted": "X", "latency_s": None},
                                                     {"id": "b", "predicted": "Y", "extra": 1}],
                                         "latency_s": 0.5}), "g", notes)
    assert [r["latency_s"] for r in matched] == [0.5, 0.5]
    assert notes


@pytest.mark.parametrize("latency", [-1.0, "0.5", True, None, 0])
def test_an_answer_latency_that_is_not_a_positive_number_is_not_given_to_results(latency):
    matched = match_results(BATCH, _raw({"results": [{"id": "a", "predicted": "X"}, {"id": "b", "predicted": "Y"}],
                                         "latency_s": latency}), "g")
    assert [r["predicted"] for r in matched] == ["X", "Y"]
    assert [r["latency_s"] for r in matched] == [0.0, 0.0]


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_through_the_public_path_every_result_has_its_latency(tmp_path, runtime):
    method = BridgeMethod(command(plugin(tmp_path, runtime), runtime), options=FAST, label=runtime)
    try:
        results = await method.translate([{"id": f"e{i}", "source": s} for i, s in enumerate(["a", "b", "own", "c"])],
                                         CONFIG)
        zero = await method.translate([{"id": "z0", "source": "a"}, {"id": "z1", "source": "zero"}], CONFIG)
    finally:
        await method.aclose()
    shares = [r["latency_s"] for r in results]
    assert shares[2] == 1.5
    assert shares[0] == shares[1] == shares[3] > 0
    assert shares[0] * 4 >= 0.0025  # the method took 3 ms
    assert zero[0]["latency_s"] > 0 and zero[1]["latency_s"] == 0.0


RECORDER = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request.get("method") == "initialize":
        result = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "Recorder", "method_id": "recorder"},
                  "card": {"initialize": request["params"]}, "capabilities": {}}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
"""


async def test_the_python_host_asks_for_shared_latency_at_initialize():
    connection = GuestConnection([sys.executable, "-c", RECORDER], options=FAST, label="recorder")
    info = await connection.start(CONFIG)
    await connection.aclose()
    assert info.card is not None and info.card["initialize"]["shared_latency"] is True
