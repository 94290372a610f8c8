"""A run directory whose lock file (``.lock``) is not the plain file a run makes there, or that cannot be made:
one line naming what is wrong and the fix, never a traceback or a bare OS error, and never a file emptied."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from mt_eval.cli import main

REPO = Path(__file__).resolve().parent.parent
LEXICON = REPO / "examples" / "lexicon-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
GRADER = REPO / "examples" / "rules-grader"
DECISIONS = REPO / "examples" / "data" / "adequacy-decisions.jsonl"


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
