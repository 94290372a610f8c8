"""``mt-eval run`` on a disk that fills: while results are appended, or when the card is written at the end. Each
stops the run with one line naming the file and how to go on, leaves no temporary file, and a resume once there is
room finishes the run with every result kept once. A resume adds no file of its own to the run directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gate_policies import LENIENT
from test_decide_faults import limited_file_size
from test_run_integrity import MISBEHAVING, corpus

SOURCES = [f"sentence number {i}" for i in range(50)]
RUN_FILES = {".lock", "run.json", "results.jsonl", "card.json", "predictions.txt"}


def run(tmp_path: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """`mt-eval run` of the reverse fixture over `SOURCES` into tmp_path/run, its files at most ``limit`` bytes (-1:
    none can grow at all)."""
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(MISBEHAVING), "--corpus",
               str(corpus(tmp_path, SOURCES)), "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet",
               "--resamples", "100", *LENIENT, "--latency-sample", "0", "--no-contamination-check", "--batch-size",
               "2", "--concurrency", "2", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180,
                          preexec_fn=limited_file_size(max(0, limit)) if limit is not None else None)


def logged_ids(out: Path) -> list[str]:
    ids = []
    for line in (out / "results.jsonl").read_bytes().splitlines():
        ids.append(json.loads(line)["id"])
    return ids


def test_a_disk_that_fills_while_results_are_appended_stops_the_run_saying_how_to_go_on(tmp_path: Path):
    """Before: ``mt-eval run: [Errno 27] File too large``, naming neither the file nor that a resume goes on."""
    out = tmp_path / "run"
    full = run(tmp_path, limit=4000)
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr and "Errno" not in full.stderr, full.stderr
    said = full.stderr.strip().splitlines()[-1]
    assert said.startswith(f"mt-eval run: cannot write {out / 'results.jsonl'}: File too large; the run stopped. The "
                           "entries translated before are saved"), said
    assert "continue with the same command and --resume" in said
    saved = logged_ids(out)
    assert 0 < len(saved) < len(SOURCES) and not (out / "card.json").exists()
    resumed = run(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(logged_ids(out)) == sorted(f"e{i}" for i in range(len(SOURCES)))  # each once
    card = json.loads((out / "card.json").read_text())
    assert card["sessions"] == 2 and card["status"] == "complete" and len(card["results"]) == len(SOURCES)


def test_a_write_the_full_disk_takes_only_in_part_is_cut_off_again(tmp_path: Path):
    """The disk took the first bytes of a batch's lines and refused the rest: that part is cut off, so the log holds
    whole lines only (before, a line cut short was left at its end for a resume to drop)."""
    out = tmp_path / "run"
    limit = 4000
    full = run(tmp_path, limit=limit)
    assert full.returncode == 1, full.stderr
    written = (out / "results.jsonl").read_bytes()
    assert 0 < len(written) < limit and written.endswith(b"\n"), written[-200:]
    assert all(json.loads(line)["id"] for line in written.splitlines())


def test_a_disk_that_fills_as_the_card_is_written_leaves_no_part_of_it_and_a_resume_writes_it(tmp_path: Path):
    """Before: ``mt-eval run: [Errno 27] File too large``, and card.json.tmp left in the run directory."""
    out = tmp_path / "run"
    full = run(tmp_path, limit=20_000)  # (the results fit; the card, which lists them all, does not)
    assert full.returncode == 1, full.stderr
    said = full.stderr.strip().splitlines()[-1]
    assert said == (f"mt-eval run: cannot write {out / 'card.json'}: File too large. Every entry translated is saved "
                    f"in {out / 'results.jsonl'}: free space, or make the directory writable, then run the same "
                    "command with --resume (in place of --force, where it has it) to write it"), full.stderr
    assert {p.name for p in out.iterdir()} == RUN_FILES - {"card.json", "predictions.txt"}
    assert len(logged_ids(out)) == len(SOURCES)
    resumed = run(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "card.json").read_text())["status"] == "complete"
    assert len(logged_ids(out)) == len(SOURCES)


def test_a_resume_adds_no_empty_logs_to_the_run_directory(tmp_path: Path):
    """Before: an empty gateway.jsonl and sandbox-denied.jsonl appeared in every resumed run's directory, made by
    the check that the logs a resume appends to can be written."""
    out = tmp_path / "run"
    assert run(tmp_path).returncode == 0
    assert run(tmp_path, "--resume").returncode == 0
    assert {p.name for p in out.iterdir()} == RUN_FILES


def test_a_lock_file_that_cannot_grow_is_said_to_need_room_not_permissions(tmp_path: Path):
    """Before: the fix given was `chmod u+rw DIR/.lock`, which the file's mode did not need (no room for a byte)."""
    out = tmp_path / "run"
    full = run(tmp_path, limit=-1)
    assert full.returncode == 1, full.stderr
    assert full.stderr.strip().splitlines()[-1] == (
        f"mt-eval run: cannot open {out / '.lock'}, the lock file that keeps a second process out of the run directory "
        f"{out}: File too large; free space on its disk (or lift the quota or file size limit in the way), or choose "
        "another --out")


def test_a_resume_on_a_disk_still_full_stops_at_run_json_saying_the_results_are_kept(tmp_path: Path):
    """Before: ``mt-eval run: [Errno 27] File too large`` (on a full disk ``[Errno 28] No space left on device``),
    naming neither run.json nor that the results so far are kept."""
    out = tmp_path / "run"
    assert run(tmp_path, limit=4000).returncode == 1  # stopped by the full disk, some results saved
    saved, recorded = logged_ids(out), (out / "run.json").read_bytes()
    still_full = run(tmp_path, "--resume", limit=300)  # (the lock file fits; run.json, rewritten whole, does not)
    assert still_full.returncode == 1, still_full.stderr
    assert still_full.stderr.strip().splitlines()[-1] == (
        f"mt-eval run: cannot write {out / 'run.json'}: File too large; the run did not resume. The results so far "
        f"are saved in {out / 'results.jsonl'}: free space, or make the directory writable, then continue with the "
        "same command and --resume"), still_full.stderr
    assert {p.name for p in out.iterdir()} == RUN_FILES - {"card.json", "predictions.txt"}  # no temporary file left
    assert logged_ids(out) == saved and (out / "run.json").read_bytes() == recorded
    resumed = run(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(logged_ids(out)) == sorted(f"e{i}" for i in range(len(SOURCES)))
    assert json.loads((out / "card.json").read_text())["sessions"] == 2
