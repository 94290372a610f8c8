"""A Node method declares how many calls it takes at once (``export const capabilities = { max_concurrency: N }``):
`mt-eval run` sends it no more, whatever ``--concurrency`` says, and refuses a count that is not one at start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gate_policies import LENIENT
from test_run_method_faults import mt_eval, node_plugin, run

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def counting(capabilities: str) -> str:
    """A method that counts its calls in flight: each result's metadata says the most seen so far."""
    return f"""
let active = 0, peak = 0;
export const capabilities = {capabilities};
export async function translate(entries) {{
  peak = Math.max(peak, ++active);
  await new Promise((resolve) => setTimeout(resolve, 40));
  active--;
  return entries.map((e) => ({{ id: e.id, predicted: 'x' + e.source, metadata: {{ peak }} }}));
}}
"""


def test_run_sends_a_node_method_no_more_calls_at_once_than_it_declares(tmp_path: Path):
    method = node_plugin(tmp_path, counting("{ max_concurrency: 2 }"), name="two")
    corpus = tmp_path / "many.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": f"s{i}", "reference": f"xs{i}"}) + "\n"
                              for i in range(24)))
    done = mt_eval("run", "--method", str(method), "--corpus", str(corpus), "--pair", "eng>spa",
                   "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100", "--concurrency", "16",
                   "--batch-size", "1", "--latency-sample", "0", *LENIENT)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 24 and all(r["error"] is None for r in results)
    assert max(r["metadata"]["peak"] for r in results) == 2


@pytest.mark.parametrize(("declared", "said"), [
    ("{ max_concurrency: 0 }", "capabilities.max_concurrency = the number 0"),
    ("{ max_concurrency: -1 }", "capabilities.max_concurrency = the number -1"),
    ("{ max_concurrency: 2.5 }", "capabilities.max_concurrency = the number 2.5"),
    ("{ max_concurrency: '2' }", 'capabilities.max_concurrency = the string "2"'),
])
def test_run_refuses_a_node_method_whose_max_concurrency_is_not_a_count(tmp_path: Path, declared: str, said: str):
    done, card = run(tmp_path, node_plugin(tmp_path, counting(declared)), "--batch-size", "1")
    assert done.returncode == 1 and card is None
    assert f"translate.js exports {said}: it must be a whole number of calls from 1" in done.stderr, done.stderr
    assert "fix: export `capabilities = { max_concurrency: N }`" in done.stderr
    assert "Traceback" not in done.stderr
