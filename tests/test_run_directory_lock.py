"""A run directory whose lock file (``.lock``) is not the plain file a run makes there, or that cannot be made:
one line naming what is wrong and the fix, never a traceback or a bare OS error, and never a file emptied."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main

REPO = Path(__file__).resolve().parent.parent
LEXICON = REPO / "examples" / "lexicon-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
GRADER = REPO / "examples" / "rules-grader"
DECISIONS = REPO / "examples" / "data" / "adequacy-decisions.jsonl"
SCRIPTED = REPO / "tests" / "fixtures" / "methods"


def command(kind: str, *extra: str) -> list[str]:
    if kind == "run":
        return ["run", "--method", str(LEXICON), "--corpus", str(DEMO), "--quiet", *extra]
    return ["decide", "run", "--method", str(GRADER), "--corpus", str(DECISIONS), "--quiet", *extra]


def odd_lock(path: Path, kind: str, tmp_path: Path) -> None:
    if kind == "directory":
        path.mkdir()
    elif kind == "symbolic link":
        path.symlink_to(tmp_path / "precious.txt")
    elif kind == "named pipe":
        os.mkfifo(path)
    else:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))


@pytest.mark.parametrize("kind", ["run", "decide"])
@pytest.mark.parametrize("lock", ["directory", "symbolic link", "named pipe", "socket"])
def test_a_lock_file_that_is_not_a_file_is_refused_in_one_line(tmp_path: Path, capsys, monkeypatch, kind: str,
                                                               lock: str):
    """Before: "mt-eval run: [Errno 21] Is a directory: 'run/.lock'" (a traceback from ``decide run``); a symbolic
    link had the file it points to emptied, a named pipe or socket ended in "[Errno 22] Invalid argument"."""
    monkeypatch.chdir(tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("a file of the user's\n")
    out = Path("run")
    out.mkdir()
    odd_lock(out / ".lock", lock, tmp_path)
    code = main(command(kind, "--out", str(out)))
    captured = capsys.readouterr()
    prog = "mt-eval run" if kind == "run" else "mt-eval decide"
    assert code == 1, captured.err
    assert captured.err.strip().splitlines()[-1] == (
        f"{prog}: run/.lock is a {lock}, where a run keeps its lock file, so run is not a run directory mt-eval "
        "wrote: choose another --out, or move it away")
    assert "Traceback" not in captured.err and "Errno" not in captured.err
    assert precious.read_text() == "a file of the user's\n"
    assert sorted(p.name for p in out.iterdir()) == [".lock"]


@pytest.mark.parametrize("kind", ["run", "decide"])
def test_a_default_run_directory_that_cannot_be_made_says_why_and_the_fix(tmp_path: Path, capsys, monkeypatch,
                                                                           kind: str):
    """Before: "mt-eval run: [Errno 20] Not a directory: 'runs/lexicon-eng-spa__eng-spa-demo'" (and a traceback
    from ``decide run``) when the working directory holds a file named ``runs``."""
    monkeypatch.chdir(tmp_path)
    Path("runs").write_text("notes\n")
    code = main(command(kind))
    captured = capsys.readouterr()
    prog, out = (("mt-eval run", "runs/lexicon-eng-spa__eng-spa-demo") if kind == "run" else
                 ("mt-eval decide", "runs/decisions/rules-grader__adequacy-decisions"))
    assert code == 1, captured.err
    assert captured.err.strip().splitlines()[-1] == (
        f"{prog}: cannot create the run directory {out}: runs is a file, not a directory; give --out a directory "
        "you can write in")
    assert "Traceback" not in captured.err and Path("runs").read_text() == "notes\n"


@pytest.mark.parametrize("then", ["moved", "moved, and another directory made at its path", "removed"])
def test_a_run_directory_moved_or_removed_while_the_run_uses_it_is_written_nowhere_else(tmp_path: Path, then: str):
    """Before: "mt-eval run: [Errno 2] No such file or directory: 'run/.run.json.5202.tmp'"; with a directory made at
    the old path (a new run's, say), the run wrote its run.json, card and predictions.txt into that one."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}."})
                              + "\n" for i in range(60)))
    def command(out: str, *extra: str) -> list[str]:
        return [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(SCRIPTED), "--corpus", str(corpus),
                "--pair", "eng>spa", "--out", out, "--batch-size", "1", "--concurrency", "2", "--resamples", "100",
                "--param", "sleep_s=0.1", "--latency-sample", "0", "--quiet", *LENIENT, *extra]

    moved = moved_while_running(tmp_path, command, then, prog="mt-eval run")
    if moved is None:
        return
    resumed = subprocess.run(command(str(moved), "--resume"), cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert main(["verify", str(moved / "card.json")]) == 0


def test_force_removes_the_card_before_the_log_it_was_scored_from(tmp_path: Path, monkeypatch):
    """A reader (`verify`, `compare`, `publish`) of a directory that ``--force`` is clearing never finds the old card
    with its results log gone. Before: results.jsonl was removed first, so a card referring to it stood without it."""
    monkeypatch.chdir(tmp_path)
    assert main(command("run", "--out", "run")) == 0
    seen: list[tuple[str, bool]] = []
    unlink = Path.unlink

    def watched(path: Path, missing_ok: bool = False) -> None:
        if path.parent == Path("run") and path.name in ("results.jsonl", "card.json"):
            seen.append((path.name, Path("run/card.json").exists()))
        unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", watched)
    assert main(command("run", "--out", "run", "--force")) == 0
    assert ("results.jsonl", False) in seen and ("results.jsonl", True) not in seen, seen


def moved_while_running(tmp_path: Path, command: Callable[..., list[str]], then: str, *, prog: str) -> Path | None:
    """``command("run")`` started in ``tmp_path``, its run directory moved (or removed, ``then``) once 4 results are
    logged: the run ends with exit 1 saying so, in ``prog``'s words, and writes nothing more at ``run``. Where the
    directory went (None: removed)."""
    run = subprocess.Popen(command("run"), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log, deadline = tmp_path / "run" / "results.jsonl", time.monotonic() + 60
    while not (log.exists() and log.read_bytes().count(b"\n") >= 4) and time.monotonic() < deadline:
        time.sleep(0.02)
    if then == "removed":
        for path in (tmp_path / "run").iterdir():
            path.unlink()
        (tmp_path / "run").rmdir()
    else:
        (tmp_path / "run").rename(tmp_path / "moved")
    if then.endswith("at its path"):
        (tmp_path / "run").mkdir()
    _, err = run.communicate(timeout=120)
    assert run.returncode == 1, err
    if then == "removed":
        assert err.strip().splitlines()[-1] == (
            f"{prog}: the run directory run was removed while the run was using it, with what it had finished: "
            "start the run again (a run directory is used by one process at a time, and is not to be moved or "
            "removed while a run uses it)")
        assert not (tmp_path / "run").exists()
        return None
    moved = tmp_path / "moved"
    assert err.strip().splitlines()[-1] == (
        f"{prog}: the run directory run was moved to {moved} while the run was using it, so nothing more is "
        f"written at run: everything it finished is saved in {moved}; finish it there with the same command and "
        f"--resume --out {moved}")
    assert not (tmp_path / "run").exists() or list((tmp_path / "run").iterdir()) == []
    return moved
