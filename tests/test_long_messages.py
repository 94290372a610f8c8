"""A method's error message of any length — raised or thrown, or returned as a result's ``error`` — is kept at
`MESSAGE_LIMIT` characters, its start and how much was cut, in process, isolated and from a Node method alike: the
card, the results log and the run's summary stay small, the exit status is what it was, and verify passes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.lone_surrogates import MESSAGE_LIMIT, capped

REPO = Path(__file__).parent.parent
DEMO = str(REPO / "examples" / "data" / "eng-spa-demo.json")
NODE = shutil.which("node")
LONG = 1_000_000

PYTHON_METHOD = """
class Long:
    async def translate(self, entries, config):
        if entries[0]["id"] == "demo-02":
            if config.params.get("returns"):
                return [{"id": "demo-02", "error": "y" * 1_000_000}]
            raise RuntimeError("x" * 1_000_000)
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]
"""
NODE_METHOD = """
export async function translate(entries, config) {
  if (entries[0].id === 'demo-02') {
    if (config.params?.returns) return [{ id: 'demo-02', error: 'y'.repeat(1_000_000) }];
    throw new RuntimeError('x'.repeat(1_000_000));
  }
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
class RuntimeError extends Error { name = 'RuntimeError'; }
"""


def plugin(tmp_path: Path, runtime: str) -> Path:
    directory = tmp_path / runtime
    directory.mkdir()
    entry = {"entry_point": "pipeline:Long"} if runtime == "python" else {"node_entry": "translate.js"}
    (directory / "method.json").write_text(json.dumps({"name": "Long", "method_id": "long", "dependencies": [],
                                                       "supported_pairs": ["eng>spa"], **entry}))
    (directory / ("pipeline.py" if runtime == "python" else "translate.js")).write_text(
        PYTHON_METHOD if runtime == "python" else NODE_METHOD)
    return directory


def mt_eval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True, timeout=300)


RUNS = [pytest.param("python", [], id="in-process"), pytest.param("python", ["--isolate"], id="isolated"),
        pytest.param("node", [], id="node", marks=pytest.mark.skipif(NODE is None, reason="node is not installed"))]


@pytest.mark.parametrize(("runtime", "how"), RUNS)
@pytest.mark.parametrize("returns", [False, True], ids=["raised", "returned"])
def test_a_methods_long_error_is_capped_in_the_card_the_log_and_the_summary(tmp_path, runtime, how, returns):
    out = tmp_path / "run"
    params = ["--param", "returns=true"] if returns else []
    done = mt_eval("run", "--method", str(plugin(tmp_path, runtime)), "--corpus", DEMO, "--out", str(out),
                   "--batch-size", "1", "--max-errors", "1", *how, *params)
    assert done.returncode == 5, done.stderr[-3000:]  # (partial: within --max-errors)
    assert "1 of 33 entries failed" in done.stderr, done.stderr[-3000:]
    assert len(done.stderr) + len(done.stdout) < 3 * MESSAGE_LIMIT, done.stderr[-3000:]
    expected = capped("y" * LONG if returns else "the method failed: RuntimeError: " + "x" * LONG)
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert [f["message"] for f in card["failures"]] == [expected]
    assert (out / "card.json").stat().st_size < 20 * MESSAGE_LIMIT
    logged = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["error"] for r in logged if r.get("error")] == [expected]
    verified = mt_eval("verify", str(out / "card.json"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_program_guests_long_failure_and_returned_error_are_capped(tmp_path):
    method = tmp_path / "program"
    method.mkdir()
    (method / "method.json").write_text(json.dumps({
        "name": "Long", "method_id": "long", "dependencies": [], "supported_pairs": ["eng>spa"],
        "command": [sys.executable, str(REPO / "tests" / "guests" / "misbehaving.py"), "long-messages"]}))
    out = tmp_path / "run"
    done = mt_eval("run", "--method", str(method), "--corpus", DEMO, "--out", str(out), "--batch-size", "1",
                   "--max-errors", "2")
    assert done.returncode == 5 and "2 of 33 entries failed" in done.stderr, done.stderr[-3000:]
    assert len(done.stderr) + len(done.stdout) < 3 * MESSAGE_LIMIT, done.stderr[-3000:]
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert sorted(f["message"] for f in card["failures"]) == [
        capped("the method failed: RuntimeError: " + "x" * LONG), capped("y" * LONG)]
    assert mt_eval("verify", str(out / "card.json")).returncode == 0


DECIDER = """
class Long:
    async def decide(self, rows, config):
        if config.params.get("raises"):
            raise RuntimeError("x" * 1_000_000)
        return [{"id": r["id"], "error": "y" * 1_000_000} if i % 2 else
                {"id": r["id"], "answers": {q: {"error": "z" * 1_000_000} for q in r["questions"]}}
                for i, r in enumerate(rows)]
"""


@pytest.mark.parametrize("raises", [False, True], ids=["returned", "raised"])
def test_a_decide_methods_long_errors_are_capped(tmp_path, raises):
    method = tmp_path / "grader"
    method.mkdir()
    (method / "method.json").write_text(json.dumps({
        "entry_point": "pipeline:Long", "dependencies": [], "name": "Long grader", "implements": ["decide"],
        "decide": {"question_types": ["score"]}, "dependency_class": "S"}))
    (method / "pipeline.py").write_text(DECIDER)
    out = tmp_path / "decided"
    done = mt_eval("decide", "run", "--method", str(method), "--corpus",
                   str(REPO / "examples" / "data" / "adequacy-decisions.jsonl"), "--out", str(out),
                   *(["--param", "raises=true"] if raises else []))
    assert done.returncode == 4 and "no question was answered" in done.stderr, done.stderr[-3000:]
    assert len(done.stderr) + len(done.stdout) < 6 * MESSAGE_LIMIT, done.stderr[-3000:]
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    long = {capped("the method failed: RuntimeError: " + "x" * LONG)} if raises else {capped("y" * LONG),
                                                                                          capped("z" * LONG)}
    assert long <= {f["message"] for f in card["failures"]}
    assert (out / "card.json").stat().st_size + (out / "results.jsonl").stat().st_size < 200_000


def test_capped_keeps_the_start_says_what_was_cut_and_cuts_nothing_twice():
    assert capped("short") == "short"
    assert capped("z" * MESSAGE_LIMIT) == "z" * MESSAGE_LIMIT
    long = capped("é" * 10_000_000)
    assert long == f"{'é' * (MESSAGE_LIMIT - 40)}… (9,998,040 characters more)"
    assert len(long) <= MESSAGE_LIMIT and capped(long) == long
    assert capped("🙂" * MESSAGE_LIMIT) == "🙂" * MESSAGE_LIMIT  # (a code point is a character)
    said = "the method failed: RuntimeError: "  # (a guest's capped message, worded by its host)
    assert capped(said + capped("x" * LONG)) == capped(said + "x" * LONG) == (
        f"{said}{'x' * (MESSAGE_LIMIT - 40 - len(said))}… (998,073 characters more)")
