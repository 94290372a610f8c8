"""``mt-eval new`` where something is already there: a DIR that is a symbolic link leading nowhere, and (with
``--force``) a plugin generated before. Each is refused in one line saying what to do, and loses nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from new_plugins import new


@pytest.mark.parametrize("below", [False, True], ids=["dir", "parent"])
def test_a_symbolic_link_that_leads_nowhere_is_refused_naming_where_it_points(tmp_path, monkeypatch, capsys, below):
    """``exists()`` is false for a dangling link, yet nothing can be made in its place: it was a traceback."""
    monkeypatch.chdir(tmp_path)
    Path("dangling").symlink_to(tmp_path / "gone" / "plugin")
    Path("loop").symlink_to("loop")
    suffix = "/plugin" if below else ""
    assert new(f"dangling{suffix}", "--no-input") == 2
    assert capsys.readouterr().err == (f"mt-eval new: dangling is a symbolic link to {tmp_path}/gone/plugin, which "
                                       "does not exist: remove the link, or create the directory it points to\n")
    assert new(f"loop{suffix}", "--no-input", "--force") == 2
    assert capsys.readouterr().err == ("mt-eval new: loop is a symbolic link to loop, a loop of links: remove the "
                                       "link, or point it at a directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "loop"]  # nothing made, the links as they were
    assert os.readlink("dangling") == str(tmp_path / "gone" / "plugin") and not (tmp_path / "gone").exists()


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every entry below ``directory``: a file's bytes, None for a directory."""
    return {p.relative_to(directory).as_posix(): None if p.is_dir() else p.read_bytes()
            for p in sorted(directory.rglob("*"))}


def test_force_over_an_entry_of_another_kind_is_refused_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """A generated file that is now a directory had the template's file copied into it (exit 0); a generated
    directory that is now a file was a shutil.Error after part of the plugin had been written."""
    monkeypatch.chdir(tmp_path)
    target = Path("mine")
    assert new(str(target), "--no-input") == 0
    (target / "method.json").unlink()
    (target / "method.json").mkdir()
    (target / "method.json" / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (target / "pipeline.py").write_text("# my own pipeline\n", encoding="utf-8")
    before = snapshot(target)
    capsys.readouterr()
    assert new(str(target), "--no-input", "--force") == 2
    assert capsys.readouterr().err == ("mt-eval new: mine/method.json is a directory, where the template writes "
                                       "a file: move it away or rename it, then run again; nothing was written\n")
    assert snapshot(target) == before
    for entry in (target / "tests").iterdir():
        entry.unlink()
    (target / "tests").rmdir()
    (target / "tests").write_text("my test list\n", encoding="utf-8")
    before = snapshot(target)
    assert new(str(target), "--no-input", "--force") == 2
    err = capsys.readouterr().err
    assert err == ("mt-eval new: mine/method.json is a directory, where the template writes a file; "
                   "mine/tests is a file, where the template makes a directory: move them away or rename them, "
                   "then run again; nothing was written\n")
    assert snapshot(target) == before
    (target / "method.json" / "notes.txt").rename(tmp_path / "notes.txt")  # moved away: the plugin is written
    (target / "method.json").rmdir()
    (target / "tests").rename(target / "tests.txt")
    assert new(str(target), "--no-input", "--force") == 0
    assert (target / "method.json").is_file() and (target / "tests").is_dir()
    assert (target / "pipeline.py.orig").read_text(encoding="utf-8") == "# my own pipeline\n"
    assert (target / "tests.txt").read_text(encoding="utf-8") == "my test list\n"
