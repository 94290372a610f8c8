"""Results that match no entry of their call: dropped, and said for the first few calls of a run, in every runtime."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from mt_eval.harness.runcard import RunCard
from mt_eval.results import ResultNotes
from test_run_method_faults import corpus, needs_node, node_plugin, plugin

GHOSTS = """
class M:
    async def translate(self, entries, config):
        ghost = {"id": "ghost-" + entries[0]["id"]}
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries] + [ghost]
"""
GHOSTS_JS = """
exports.translate = async (entries) => [...entries.map((e) => ({ id: e.id, predicted: 'x' + e.source })),
  { id: 'ghost-' + entries[0].id }];
"""
SHAPE = ' (a result is {"id": entry["id"], "predicted": TEXT}, one per entry)'
SAID = "the method returned results that match no entry it was sent (ids \"ghost-e{}\"); they were dropped"
LATER = "; later calls' results that match no entry are dropped without a word"


@pytest.mark.parametrize("runtime", ["python", "isolated", pytest.param("node", marks=needs_node)])
def test_a_run_says_the_first_calls_that_return_unmatched_results_and_keeps_every_entry(tmp_path: Path, runtime):
    """In this process they had been dropped without a word; through a guest, said again for every batch."""
    method = node_plugin(tmp_path, GHOSTS_JS) if runtime == "node" else plugin(tmp_path, GHOSTS)
    sources = [f"s{i}" for i in range(8)]
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
                           str(corpus(tmp_path, sources)), "--pair", "eng>spa", "--out", str(tmp_path / "run"),
                           "--quiet", "--resamples", "100", "--batch-size", "1", "--concurrency", "1",
                           "--latency-sample", "0", *(["--isolate"] if runtime == "isolated" else [])],
                          capture_output=True, text=True, timeout=120)
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert [r.predicted for r in card.results] == ["x" + s for s in sources], done.stderr
    said = [line for line in done.stderr.splitlines() if "match no entry" in line]
    assert said == [SAID.format(0) + SHAPE,
                    SAID.format(1) + SHAPE,
                    SAID.format(2) + SHAPE + LATER], done.stderr


def test_each_host_counts_its_own_calls():
    first, second = ResultNotes(), ResultNotes()
    for i in range(5):
        first.stray_warning([str(i)])  # (a warning said already is not said again: each call's its own)
    assert first.stray_warning(["b"]) is None
    assert second.stray_warning(["b"]) == 'the method returned results that match no entry it was sent (ids "b"); ' \
        "they were dropped (a result is {\"id\": entry[\"id\"], \"predicted\": TEXT}, one per entry)"
    assert second.stray_warning([]) is None and second.stray_calls == 1


NO_STRING_IDS = """
class M:
    async def translate(self, entries, config):
        return [{"id": i, "predicted": "x"} for i, _ in enumerate(entries)] + [{"predicted": "y"}, "z"]
"""
NO_STRING_IDS_JS = """
exports.translate = async (entries) => [...entries.map((e, i) => ({ id: i, predicted: 'x' })), { predicted: 'y' }, 'z'];
"""


@pytest.mark.parametrize("runtime", ["python", "isolated", pytest.param("node", marks=needs_node)])
def test_results_without_a_string_id_are_said_in_every_runtime(tmp_path: Path, runtime):
    """Through a guest they had been left out without a word to the host (the Node guest told its own stderr)."""
    method = node_plugin(tmp_path, NO_STRING_IDS_JS) if runtime == "node" else plugin(tmp_path, NO_STRING_IDS)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
                           str(corpus(tmp_path, ["a", "b"])), "--pair", "eng>spa", "--out", str(tmp_path / "run"),
                           "--quiet", "--resamples", "100", "--latency-sample", "0",
                           *(["--isolate"] if runtime == "isolated" else [])],
                          capture_output=True, text=True, timeout=120)
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert {r.error for r in card.results} == {
        "the method returned no result for this entry, and results whose id matches no entry of the call (a result's "
        "id is its entry's id, a string)"}
    said = {line for line in done.stderr.splitlines() if "match no entry" in line}
    assert said == {"the method returned results that match no entry it was sent (ids 0, 1, null; 1 item that is not "
                    "an object: the string \"z\"); they were dropped" + SHAPE}, done.stderr


@pytest.mark.parametrize("runtime", ["python", "isolated", pytest.param("node", marks=needs_node)])
def test_latency_calls_that_return_unmatched_results_measure_nothing_and_say_nothing_in_every_runtime(
        tmp_path: Path, runtime):
    """Through a guest the host had dropped the stray results of the latency calls, said them (three times, the
    run's own call then unsaid) and timed the calls; in this process they failed the measurement, unsaid."""
    method = node_plugin(tmp_path, GHOSTS_JS) if runtime == "node" else plugin(tmp_path, GHOSTS)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
                           str(corpus(tmp_path, ["a", "b", "c"])), "--pair", "eng>spa", "--out", str(tmp_path / "run"),
                           "--resamples", "100", "--no-contamination-check",
                           *(["--isolate"] if runtime == "isolated" else [])],
                          capture_output=True, text=True, timeout=120)
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert [r.predicted for r in card.results] == ["xa", "xb", "xc"], done.stderr
    said = [line for line in done.stderr.splitlines() if "match no entry" in line]
    assert said == [SAID.format(0) + SHAPE], done.stderr
    assert (card.latency.cold_failed, card.latency.hot_calls) == ("not one result", 0)
    assert card.latency.hot_failed == card.latency.repetitions * card.latency.hot_entries > 0
    assert "  latency: not measured (the first call: not one result)" in done.stdout.splitlines(), done.stdout
