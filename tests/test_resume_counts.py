"""`--resume` gives the card an uninterrupted run gives: a results log line no run writes is translated again,
and what was changed to accept the method's results is counted over every session."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard
from test_run_integrity import MISBEHAVING, SCRIPTED, SOURCES, expected, predictions, run

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.mark.parametrize("line", [1, 7], ids=["inside", "last"])
def test_a_logged_result_without_predicted_or_error_is_translated_again(tmp_path: Path, line: int):
    """Before: the line was kept as the entry's result, scored as an empty translation and not counted as a
    failure, and the card the resume wrote did not verify ("not a result a run accepts")."""
    code, _, _ = run(tmp_path, MISBEHAVING, SOURCES)
    log = tmp_path / "run" / "results.jsonl"
    records = [json.loads(text) for text in log.read_text().splitlines()]
    records[line]["predicted"] = None  # (an edit, or a log of another tool: a run never writes it)
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    (tmp_path / "run" / "card.json").unlink()
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, "--resume")
    assert code == 0 and card is not None, err
    assert f"dropped 1 damaged line(s) (line {line + 1} of entry {records[line]['id']})" in err
    assert predictions(card) == expected(SOURCES, -1) and card.errors == 0
    assert main(["verify", str(tmp_path / "run"), "--quiet"]) == 0


SLOW_PYTHON = """
import asyncio

class Slow:
    async def translate(self, entries, config):
        await asyncio.sleep(0.25)
        return [{"id": e["id"], "predicted": e["source"], "latency_s": None, "note": 1} for e in entries]
"""
SLOW_NODE = """
export async function translate(entries) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  return entries.map((e) => ({ id: e.id, predicted: e.source, latency_s: null, note: 1 }));
}
"""


def slow_plugin(tmp_path: Path, runtime: str) -> Path:
    """A method that takes 0.25 s a call and returns results written for the upstream harness."""
    plugin = tmp_path / f"slow-{runtime}"
    plugin.mkdir()
    entry = {"entry_point": "slow:Slow"} if runtime == "python" else {"node_entry": "translate.js"}
    (plugin / ("slow.py" if runtime == "python" else "translate.js")).write_text(
        SLOW_PYTHON if runtime == "python" else SLOW_NODE)
    (plugin / "method.json").write_text(json.dumps({
        "name": "Slow", "method_id": f"slow-{runtime}", "class": "pipeline", "version": "0.1.0", "description": "d",
        "author": "a", "supported_pairs": ["eng>spa"], "dependency_class": "S", "dependencies": [], **entry}))
    return plugin


def one_at_a_time(tmp_path: Path, method: Path, entries: int, *more: str) -> tuple[list[str], Path]:
    """The `mt-eval run` command of ``method`` over ``entries`` entries (e0: "s 0" → "S 0", …), one call at a time,
    and its results log."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": f"s {i}", "reference": f"S {i}"}) + "\n"
                              for i in range(entries)))
    out = tmp_path / "run"
    return [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus", str(corpus), "--out",
            str(out), "--quiet", "--resamples", "100", *LENIENT, "--latency-sample", "0", "--batch-size", "1",
            "--concurrency", "1", *more], out / "results.jsonl"


def wait_for_lines(process: subprocess.Popen[str], log: Path, lines: int) -> None:
    """Until the run has logged ``lines`` results (or ended, or a minute passed)."""
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline and (
            not log.exists() or log.read_text().count("\n") < lines):
        time.sleep(0.05)


@pytest.mark.parametrize("runtime", ["python", pytest.param("node", marks=needs_node)])
def test_results_changed_to_be_accepted_are_counted_over_an_interrupted_run(tmp_path: Path, runtime: str):
    """Before: Ctrl-C lost the interrupted session's counts, so the card said 4 of 12 results had a null
    latency_s (those of the resuming session) where an uninterrupted run says 12."""
    entries = 12
    command, log = one_at_a_time(tmp_path, slow_plugin(tmp_path, runtime), entries)
    out = log.parent
    interrupted = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_lines(interrupted, log, 4)
    interrupted.send_signal(signal.SIGINT)
    _, err = interrupted.communicate(timeout=60)
    assert interrupted.returncode == 130, err
    done = len(log.read_text().splitlines())
    assert 4 <= done < entries
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    card = msgspec.json.decode((out / "card.json").read_bytes(), type=RunCard)
    assert card.sessions == 2
    assert card.normalised == {'"latency_s": null treated as absent': entries,
                               'unknown field "note" moved into metadata': entries}


@pytest.mark.parametrize("runtime", ["python", pytest.param("node", marks=needs_node)])
def test_a_run_killed_outright_resumes_with_the_counts_it_had_saved(tmp_path: Path, runtime: str):
    """Before: run.json held the counts only from a session's end (or Ctrl-C), so after kill -9 the card counted
    the resuming session's results alone. run.json now keeps them as the run goes (each second)."""
    import os

    command, log = one_at_a_time(tmp_path, slow_plugin(tmp_path, runtime), 16)
    out = log.parent
    killed = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    wait_for_lines(killed, log, 8)  # (2 s of calls: a second's counts saved)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=60)
    done = len(log.read_text().splitlines())
    saved = json.loads((out / "run.json").read_text())["normalised"].get('"latency_s": null treated as absent', 0)
    assert 4 <= saved <= done < 16
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    card = msgspec.json.decode((out / "card.json").read_bytes(), type=RunCard)
    assert card.sessions == 2 and card.normalised['"latency_s": null treated as absent'] == saved + 16 - done


def test_retries_still_queued_when_a_run_is_interrupted_are_not_spent(tmp_path: Path):
    """Before: a retry counted as spent when it was queued, behind the entries not yet sent, so Ctrl-C left a
    run.json whose budget (--retry-budget 3) was used up by retries never made: the resumed run could not retry
    e0-e2 and they failed (exit 3), where an uninterrupted run retries them and completes."""
    command, log = one_at_a_time(tmp_path, SCRIPTED, 12, "--pair", "eng>spa", "--retry-budget", "3", "--param",
                                 'flaky=["e0", "e1", "e2"]', "--param", "sleep_s=0.2")
    out = log.parent
    interrupted = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_lines(interrupted, log, 4)  # (e0-e2 failed once: queued behind the rest)
    interrupted.send_signal(signal.SIGINT)
    _, err = interrupted.communicate(timeout=60)
    assert interrupted.returncode == 130, err
    assert json.loads((out / "run.json").read_text())["retries_used"] == 0
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    card = msgspec.json.decode((out / "card.json").read_bytes(), type=RunCard)
    assert card.errors == 0 and card.covariates.retries_used == 3 and card.sessions == 2
