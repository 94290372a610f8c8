"""A run directory whose results log cannot be written (chmod 444; as root, chattr +i): `mt-eval run --resume` and
`mt-eval decide run --resume` refuse in one line naming the file and the fix, before anything is changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from test_decide_run import rows, write_corpus
from test_new_existing import unwritable
from test_run import corpus
from test_run_directory_kinds import decide, translate


def fix(path: Path) -> str:
    """The end of the refusal: as root, only an immutable file stops a write."""
    if os.geteuid() == 0:
        why, what = "Operation not permitted", f"clear its immutable flag (chattr -i {path})"
    else:
        why, what = "Permission denied", f"make it writable for you (chmod u+w {path})"
    return f"({why}), and the run appends its results to it: {what}, then resume again"


def snapshot(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir()) if path.name != ".lock"}


@pytest.mark.parametrize("command", ["run", "decide run"])
def test_resume_with_a_results_log_it_cannot_write_says_so_and_changes_nothing(tmp_path, capsys, command):
    """Before: "[Errno 13] Permission denied: '…/results.jsonl'" ("[Errno 1] Operation not permitted" as root), from
    decide run as a PermissionError traceback, once run.json had been rewritten as a new session's."""
    out = tmp_path / "run"
    start, given = (translate, corpus(tmp_path)) if command == "run" else (decide, write_corpus(tmp_path / "c.jsonl",
                                                                                                  rows(3)))
    assert start(out, given) == 0
    log = out / "results.jsonl"
    (out / "card.json").unlink()  # (the card not written: a complete run's resume has nothing to write)
    before = snapshot(out)
    capsys.readouterr()
    with unwritable(log):
        assert start(out, given, "--resume") == 1
    prog = "mt-eval run" if command == "run" else "mt-eval decide"
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"{prog}: cannot resume {out}: {log} cannot be written {fix(log)}")
    assert snapshot(out) == before
    assert start(out, given, "--resume") == 0  # once it can be written
