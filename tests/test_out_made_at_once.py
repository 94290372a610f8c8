"""Runs started together whose ``--out`` share a parent that does not exist yet (``--out runs/a`` and ``--out runs/b``
in a fresh checkout: two CI jobs, a shell loop with ``&``): each checks its ``--out`` by making it, and the parent
another process makes or removes meanwhile is no reason to refuse."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

from mt_eval.harness.run_directory import RunError, writable_directory


def test_a_parent_another_process_made_first_is_used(tmp_path: Path, monkeypatch):
    """Before: "cannot create --out runs/b: File exists" (both made ``runs``; one of them was refused)."""
    original = Path.mkdir
    parent = tmp_path / "runs"

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if self == parent and not parent.exists():
            os.mkdir(parent)  # the other process, a moment earlier
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    writable_directory(parent / "b", "the run")
    assert not (parent / "b").exists()
    assert parent.is_dir()  # the other process's to remove


def test_a_parent_another_process_removed_meanwhile_is_made_again(tmp_path: Path, monkeypatch):
    """Before: "cannot create --out runs/b: No such file or directory" (the other process, done checking its own
    --out, removed the ``runs`` it had made, just after this one saw it)."""
    original = Path.mkdir
    parent = tmp_path / "runs"
    parent.mkdir()  # made by the other process
    removed: list[Path] = []

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if self == parent / "b" and not removed:
            os.rmdir(parent)  # the other process removes what it made
            removed.append(parent)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    writable_directory(parent / "b", "the run")
    assert removed and not parent.exists()  # this process made it again, and removed it again


def _check(outs: list[str], together: threading.Barrier, results: multiprocessing.Queue) -> None:
    refused = []
    for out in outs:
        together.wait(30)  # (each round starts in every process at once)
        try:
            writable_directory(Path(out), "the run")
        except RunError as exc:
            refused.append(str(exc))
    results.put(refused)


def test_processes_checking_siblings_at_once_all_pass(tmp_path: Path):
    context = multiprocessing.get_context("spawn")
    together, results = context.Barrier(3), context.Queue()
    names = ("a", "b", "c")
    processes = [context.Process(target=_check, args=([str(tmp_path / str(n) / "runs" / name) for n in range(200)],
                                                      together, results)) for name in names]
    for process in processes:
        process.start()
    refusals = [said for _ in processes for said in results.get(timeout=120)]
    for process in processes:
        process.join(30)
    assert refusals == []
