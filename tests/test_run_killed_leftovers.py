"""A run ended abruptly leaves nothing behind that outlives its `--resume`: a temporary file of a write cut short by
SIGKILL (the card's, as the run wrote it) is removed by the next session, and a results log repaired on a full disk
is left as it was, with no part of its new copy beside it and a message saying what to do."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

from gate_policies import LENIENT

HERE = Path(__file__).parent
REVERSE = HERE / "fixtures" / "reverse"
SOURCES = [f"source number {i} of the corpus" for i in range(120)]


def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": s[::-1]}) + "\n"
                            for i, s in enumerate(SOURCES)))
    return path


def run(tmp_path: Path, *args: str, file_size_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(REVERSE), "--corpus", str(corpus(tmp_path)),
               "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100", *LENIENT,
               "--latency-sample", "0", "--no-contamination-check", "--batch-size", "4", "--concurrency", "8", *args]

    def limited() -> None:  # (a full disk, as a file size limit: no write past it is taken)
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(command, capture_output=True, text=True, timeout=120, preexec_fn=limited)


def leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name.endswith(".tmp"))


def test_a_card_cut_short_by_sigkill_leaves_no_temporary_file_after_the_resume(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr
    out = tmp_path / "run"
    card = (out / "card.json").read_bytes()
    # as a run killed outright while it wrote its card: the card's temporary file, half written, and no card
    (out / "card.json").unlink()
    (out / "predictions.txt").unlink()
    (out / ".card.json.99999999.tmp").write_bytes(card[: len(card) // 2])
    (out / ".run.json.99999998.tmp").write_bytes(b'{"run_id": ')
    (out / "notes.tmp").write_text("the user's own")

    resumed = run(tmp_path, "--resume")

    assert resumed.returncode == 0, resumed.stderr
    assert leftovers(out) == ["notes.tmp"]  # (a file of the user's, whatever its name, is kept)
    assert json.loads((out / "card.json").read_bytes())["results"] == json.loads(card)["results"]
    verified = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(out / "card.json")],
                              capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_log_repaired_on_a_full_disk_is_left_as_it_was_and_the_resume_says_what_to_do(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr
    out = tmp_path / "run"
    log = out / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5][:40] + b"\n"  # a line damaged before the end: the log is written anew by the resume
    log.write_bytes(b"".join(lines))
    damaged = log.read_bytes()
    (out / "card.json").unlink()
    (out / "predictions.txt").unlink()

    full = run(tmp_path, "--resume", file_size_limit=len(damaged) // 2)

    assert full.returncode == 1, full.stderr
    assert f"cannot repair {log}: File too large; it was left as it was" in full.stderr
    assert "then continue with the same command and --resume" in full.stderr
    assert "Traceback" not in full.stderr
    assert log.read_bytes() == damaged
    assert leftovers(out) == []  # (no part of the new log is left to fill the disk)

    room = run(tmp_path, "--resume")

    assert room.returncode == 0, room.stderr
    assert "dropped 1 damaged line(s) (line 6" in room.stderr
    results = json.loads((out / "card.json").read_bytes())["results"]
    assert [r["predicted"] for r in results] == [f"spa:{s[::-1]}" for s in SOURCES]
