"""Ctrl-C at the terminal while a large corpus is scored in worker processes (`mt_eval.harness.scorer_processes`):
the command exits 130 saying it was interrupted, no process of it is left, and its workers say nothing (they
printed "Process ForkPoolWorker-N:" and a traceback each)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gate_policies import LENIENT
from process_support import marked_environment, processes_marked
from rigor_support import SCRIPTED, family_corpus, honest, run

SCORED = 3000  # (from `PARALLEL_FROM` segments, each metric is scored in a worker process of its own)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus of `SCORED` entries and two runs of it, ``copy`` and ``half`` (half of it translated)."""
    here = tmp_path_factory.mktemp("runs")
    many = family_corpus(here / "many.json", scored=SCORED)
    half = {f"Sentence number {i}.": f"Frase número {i}." for i in range(0, SCORED, 2)}
    assert run(here / "copy", many, *honest(), *LENIENT)[0] == 0
    assert run(here / "half", many, *honest(translate=half), *LENIENT)[0] == 0
    return here


def interrupted_while_scoring(command: list[str], scoring: str) -> tuple[int, str, str]:
    """Start ``mt-eval COMMAND`` in a session of its own; once its stderr says ``scoring`` and its workers are
    at work, Ctrl-C (SIGINT to the whole process group, as a terminal sends it). Its exit status, its stderr, and
    the marker of its environment (`processes_marked`)."""
    marker, environment = marked_environment()
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", *command], env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    seen = ""
    while scoring not in seen and process.poll() is None:
        seen += process.stderr.readline()
    deadline = time.monotonic() + 30
    while len(processes_marked(marker)) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert process.poll() is None, seen
    time.sleep(0.1)  # (the workers are reading the segments)
    os.killpg(process.pid, signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # (a worker that took the Ctrl-C for its own: the pool waits for it)
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
        err += "\n(still running a minute after Ctrl-C: killed)"
    return process.returncode, seen + err, marker


def no_process_left(marker: str) -> bool:
    deadline = time.monotonic() + 5
    while processes_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_marked(marker) == []


def test_ctrl_c_ends_compare_and_its_workers_quietly(runs: Path):
    code, err, marker = interrupted_while_scoring(
        ["compare", str(runs / "copy" / "card.json"), str(runs / "half" / "card.json"), "--allow-diff", "params"],
        "segment statistics")
    assert code == 130, err
    assert err.endswith("interrupted\n") and "Traceback" not in err and "ForkPoolWorker" not in err, err
    assert no_process_left(marker)


def test_ctrl_c_while_a_run_scores_keeps_its_results_and_its_workers_say_nothing(runs: Path, tmp_path: Path):
    out = tmp_path / "run"
    command = ["run", "--method", str(SCRIPTED), "--corpus", str(runs / "many.json"), "--out", str(out),
               "--resamples", "100", "--latency-sample", "0", "--no-contamination-check", *honest(), *LENIENT]
    code, err, marker = interrupted_while_scoring(command, f"scoring {SCORED:,} entries")
    assert code == 130, err
    assert "mt-eval run: interrupted; finished entries are saved. Continue with the same command and --resume." in err
    assert "Traceback" not in err and "ForkPoolWorker" not in err, err
    assert no_process_left(marker)
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == SCORED + 4  # (every entry's)
    assert not (out / "card.json").exists()
