"""A Python method declares how many calls it takes at once (``capabilities = {"max_concurrency": N}``, as a Node
method exports them): `mt-eval run` makes no more, in process or isolated, its guest (`mt-eval serve`) declares N
and runs no more, and a count that is not one is refused at load in the Node loader's words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.bridge.messages import SUPPORTED_VERSIONS
from test_run_method_faults import mt_eval, plugin, run


def counting(capabilities: str, *, on_instance: bool = False) -> str:
    """A method that counts its calls in flight: each result's metadata says the most seen so far."""
    declared = f"    def __init__(self):\n        self.capabilities = {capabilities}\n" if on_instance \
        else f"    capabilities = {capabilities}\n"
    return f"""
import asyncio

class M:
{declared}
    active = peak = 0

    async def translate(self, entries, config):
        M.active += 1
        M.peak = max(M.peak, M.active)
        await asyncio.sleep(0.04)
        M.active -= 1
        return [{{"id": e["id"], "predicted": "x" + e["source"], "metadata": {{"peak": M.peak}}}} for e in entries]
"""


@pytest.mark.parametrize(("isolate", "on_instance"), [((), False), ((), True), (("--isolate",), False)],
                         ids=["in-process", "instance-attribute", "isolated"])
def test_run_makes_no_more_calls_of_a_python_method_at_once_than_it_declares(tmp_path: Path, isolate: tuple[str, ...],
                                                                            on_instance: bool):
    method = plugin(tmp_path, counting('{"max_concurrency": 2}', on_instance=on_instance), name="two")
    corpus = tmp_path / "many.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": f"s{i}", "reference": f"xs{i}"}) + "\n"
                              for i in range(24)))
    done = mt_eval("run", "--method", str(method), "--corpus", str(corpus), "--pair", "eng>spa",
                   "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100", "--concurrency", "16",
                   "--batch-size", "1", "--latency-sample", "0", *LENIENT, *isolate)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 24 and all(r["error"] is None for r in results)
    assert max(r["metadata"]["peak"] for r in results) == 2


def test_serve_declares_what_a_python_method_declares_and_runs_no_more_calls_at_once(tmp_path: Path):
    method = plugin(tmp_path, counting('{"max_concurrency": 2}'), name="two")
    requests = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocol_versions": [*SUPPORTED_VERSIONS],
                            "config": {"source_lang": "eng", "target_lang": "spa"}}}]
    requests += [{"jsonrpc": "2.0", "id": i, "method": "translate",
                  "params": {"entries": [{"id": f"e{i}", "source": f"s{i}"}]}} for i in range(1, 11)]
    (tmp_path / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    with (tmp_path / "requests.jsonl").open() as given:  # (from a file, every request is answered before the end)
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "serve", str(method)], stdin=given,
                              capture_output=True, text=True, timeout=60)
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0, done.stderr
    assert answers[0]["result"]["capabilities"]["max_concurrency"] == 2
    peaks = [r["metadata"]["peak"] for i in range(1, 11) for r in answers[i]["result"]["results"]]
    assert len(peaks) == 10 and max(peaks) == 2


@pytest.mark.parametrize(("declared", "said"), [
    ('{"max_concurrency": 0}', "capabilities.max_concurrency = the number 0: it must be a whole number of calls"),
    ('{"max_concurrency": -1}', "capabilities.max_concurrency = the number -1: it must be a whole number of calls"),
    ('{"max_concurrency": 2.5}', "capabilities.max_concurrency = the number 2.5: it must be a whole number of calls"),
    ('{"max_concurrency": "2"}', 'capabilities.max_concurrency = the string "2": it must be a whole number of calls'),
    ('{"max_concurrency": True}', "capabilities.max_concurrency = true: it must be a whole number of calls"),
    ('{"max_batch": 4}', "capabilities.max_batch, which a method does not declare (it declares max_concurrency)"),
    ("[2]", "capabilities as an array, not a dict"),
    ("2", "capabilities as the number 2, not a dict"),
])
def test_run_refuses_a_python_method_whose_capabilities_are_not_a_count(tmp_path: Path, declared: str, said: str):
    done, card = run(tmp_path, plugin(tmp_path, counting(declared)), "--batch-size", "1")
    assert done.returncode == 1 and card is None, done.stderr
    assert f"M declares {said}" in done.stderr, done.stderr
    assert 'fix: set `capabilities = {"max_concurrency": N}` on the method' in done.stderr
    assert done.stderr.count("fix:") == 1, done.stderr  # (the protocol's general hint was said below it too)
    assert "Traceback" not in done.stderr
