"""A resumed run spends what is left of the run's retry budget, and its card counts the retries of every session."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_run import SCRIPTED, corpus, params, run

FLAKY = ["e1", "e2", "e3"]  # each fails on its first attempt in a process


def without_results(log: Path, ids: list[str]) -> None:
    """The run as if stopped before these entries were logged (they are translated again on --resume)."""
    kept = [line for line in log.read_text().splitlines() if json.loads(line)["id"] not in ids]
    log.write_text("".join(line + "\n" for line in kept))


def test_a_resumed_run_has_what_is_left_of_the_budget_and_counts_every_session_s_retries(tmp_path: Path):
    """Before: each session had a budget of its own (4 more retries here, spent on the same three entries again),
    and the card counted the last session's retries only, so a run retried more than its card said it could."""
    args = ["--method", str(SCRIPTED), "--corpus", str(corpus(tmp_path)), "--retry-budget", "4", "--batch-size", "1",
            "--concurrency", "1", *params(flaky=FLAKY)]
    code, card = run(tmp_path, *args)
    assert code == 0 and card is not None and card.covariates.retries_used == 3
    assert json.loads((tmp_path / "run" / "run.json").read_text())["retries_used"] == 3
    without_results(tmp_path / "run" / "results.jsonl", FLAKY)
    code, card = run(tmp_path, *args, "--resume")
    assert card is not None and (card.covariates.retries_used, card.covariates.retry_budget) == (4, 4)
    assert code == 3 and sorted(r.id for r in card.results if r.error) == ["e2", "e3"]  # one retry was left: e1's
    assert json.loads((tmp_path / "run" / "run.json").read_text())["retries_used"] == 4


def test_a_run_stopped_by_ctrl_c_keeps_the_retries_it_spent(tmp_path: Path):
    """run.json holds the retries a session Ctrl-C stopped had made (e0's, and e1's, in flight when stopped), so
    the session that resumes it has what is left. (Retries still queued were not made: see test_resume_counts.)"""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--out", str(out), "--quiet", "--method", str(SCRIPTED),
               "--corpus", str(corpus(tmp_path, 10)), "--batch-size", "1", "--concurrency", "1", "--latency-sample",
               "0", *params(flaky=["e0", "e1"], sleep_s=0.3)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = out / "results.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (log.exists() and '"e0"' in log.read_text()):  # (retried last)
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert '"e1"' not in log.read_text()
    assert json.loads((out / "run.json").read_text())["retries_used"] == 2
