"""A file written whole or not at all (`mt_eval.atomic_files`): a write cut short by a full disk leaves the file as
it was and no temporary file; `mt-eval freeze init --force` over a manifest keeps the old one then (before, it was
left cut short, a part of a manifest that later reads took for the whole)."""

from __future__ import annotations

import errno
import io
from pathlib import Path

import pytest

import mt_eval.atomic_files as atomic_files
from mt_eval.atomic_files import write_atomically


class FullDisk(io.BytesIO):
    """A file on a disk that fills after ``room`` bytes (what was written up to there stays in the file)."""

    def __init__(self, path: Path, room: int) -> None:
        super().__init__()
        self.path, self.room = path, room

    def write(self, data) -> int:  # type: ignore[override]
        with open(self.path, "ab") as real:
            real.write(bytes(data[:self.room]))
        raise OSError(errno.ENOSPC, "No space left on device")


def full_disk(room: int):
    return lambda path, mode="r", *args, **kwargs: FullDisk(Path(path), room)


def test_a_file_is_replaced_whole(tmp_path: Path):
    target = tmp_path / "out.json"
    target.write_bytes(b"old")
    write_atomically(target, b"new content")
    assert target.read_bytes() == b"new content" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_write_cut_short_leaves_the_old_file_and_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "out.json"
    target.write_bytes(b'{"old": true}\n')
    monkeypatch.setattr(atomic_files, "open", full_disk(4), raising=False)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, b'{"new": true, "and": "more"}\n')
    assert target.read_bytes() == b'{"old": true}\n' and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_freeze_init_over_a_manifest_on_a_full_disk_keeps_the_old_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys):
    from mt_eval.cli import main

    out = tmp_path / "freeze.json"
    args = ["freeze", "init", "--method", "examples/rules-eng-spa", "--corpus", "examples/data/eng-spa-demo.json",
            "--out", str(out)]
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert main(args) == 0
    before = out.read_bytes()
    monkeypatch.setattr(atomic_files, "open", full_disk(100), raising=False)
    assert main([*args, "--force", "--seed", "7"]) == 1
    err = capsys.readouterr().err
    assert f"cannot write --out {out}: No space left on device" in err
    assert out.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["freeze.json"]


def test_a_directory_made_for_a_write_that_fails_is_removed_unless_something_is_in_it(tmp_path: Path):
    from mt_eval.atomic_files import directory_for

    with pytest.raises(OSError), directory_for(tmp_path / "a" / "b"):
        raise OSError(errno.ENOSPC, "No space left on device")
    assert list(tmp_path.iterdir()) == []  # (both made for it)
    with pytest.raises(OSError), directory_for(tmp_path / "a" / "b"):
        (tmp_path / "a" / "kept").write_text("another's", encoding="utf-8")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["kept"]  # (b removed, a kept: not empty)
    with directory_for(tmp_path / "a" / "b"):
        (tmp_path / "a" / "b" / "card.json").write_text("{}", encoding="utf-8")
    assert (tmp_path / "a" / "b" / "card.json").is_file()
