"""``mt-eval new`` where something is already there: a DIR that is a symbolic link leading nowhere, and (with
``--force``) a plugin generated before. Each is refused in one line saying what to do, and loses nothing."""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """``path`` made unwritable for real: its write permission taken away, or, as root (whom permissions do not
    stop), made immutable (``chattr +i``; the test is skipped where that cannot be done)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("run as root, and chattr +i cannot make a file immutable here")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


@pytest.mark.parametrize("entry", [".", "method.json"])
def test_force_into_a_directory_that_cannot_be_written_is_refused_before_anything_is_written(
        tmp_path, monkeypatch, capsys, entry):
    """It was an OSError traceback (from keeping the changed file as .orig, or from copying over a file)."""
    monkeypatch.chdir(tmp_path)
    assert new("mine", "--no-input") == 0
    Path("mine/pipeline.py").write_text("# my own pipeline\n", encoding="utf-8")
    before = snapshot(Path("mine"))
    capsys.readouterr()
    shown = os.path.normpath(f"mine/{entry}")
    with unwritable(Path("mine") / entry):
        assert new("mine", "--no-input", "--force") == 1
    assert capsys.readouterr().err == (f"mt-eval new: {shown} cannot be written: make it writable, or choose "
                                       "another directory; nothing was written\n")
    assert snapshot(Path("mine")) == before


def test_new_dot_in_a_directory_that_cannot_be_written_says_so_of_that_directory(tmp_path, monkeypatch, capsys):
    """`mt-eval new .` was told that "." "cannot be created", of the directory it is in."""
    (tmp_path / "mine").mkdir()
    monkeypatch.chdir(tmp_path / "mine")
    with unwritable(tmp_path / "mine"):
        assert new(".", "--no-input") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mt-eval new: {tmp_path / 'mine'} cannot be written: ") and err.endswith(
        "; make it writable, or choose another directory; nothing was written\n"), err
    assert list((tmp_path / "mine").iterdir()) == []


def test_a_write_that_fails_part_way_says_what_was_written_and_loses_nothing(tmp_path, monkeypatch, capsys):
    """A disk that fills while the plugin is copied over the old one (simulated: the third copy fails)."""
    monkeypatch.chdir(tmp_path)
    assert new("mine", "--no-input") == 0
    files = sum(path.is_file() for path in Path("mine").rglob("*"))  # what the template writes
    Path("mine/pipeline.py").write_text("# my own pipeline\n", encoding="utf-8")
    copies = []
    copy2 = shutil.copy2

    def filling(source: str | Path, destination: str | Path) -> object:
        copies.append(destination)
        if len(copies) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return copy2(source, destination)

    monkeypatch.setattr(shutil, "copy2", filling)
    capsys.readouterr()
    assert new("mine", "--no-input", "--force") == 1
    err = capsys.readouterr().err
    assert err.endswith(f"mt-eval new: writing into mine stopped at {os.path.normpath(copies[2])}: No space left on "
                        f"device; 2 of {files} files were written; pipeline.py of yours kept as .orig: once it can "
                        "be written, run again with --force\n")
    assert Path("mine/pipeline.py.orig").read_text(encoding="utf-8") == "# my own pipeline\n"
    monkeypatch.setattr(shutil, "copy2", copy2)
    assert new("mine", "--no-input", "--force") == 0  # the space is back: written, and nothing of yours lost
    assert Path("mine/pipeline.py.orig").read_text(encoding="utf-8") == "# my own pipeline\n"
    assert "Traceback" not in capsys.readouterr().err


def test_standard_input_ending_at_the_question_to_replace_changed_files_is_no(tmp_path, monkeypatch, capsys):
    """``Replace them?`` read past the end of standard input: it was an EOFError traceback."""
    monkeypatch.chdir(tmp_path)
    assert new("mine", "--no-input") == 0
    Path("mine/pipeline.py").write_text("# my own pipeline\n", encoding="utf-8")
    before = snapshot(Path("mine"))
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n" * 11))  # every question answered by its default; then nothing
    assert new("mine", "--force") == 1
    err = capsys.readouterr().err
    assert err.endswith("mt-eval new: standard input ended before the answer, taken as no (--no-input replaces them, "
                        "keeping yours as .orig)\nmt-eval new: nothing was written: your changed files are as they "
                        "were\n")
    assert snapshot(Path("mine")) == before


def test_regenerating_for_another_runtime_removes_what_only_the_earlier_one_wrote_unless_you_changed_it(
        tmp_path, monkeypatch, capsys):
    """Regenerated for Node, a Python plugin kept its pipeline.py and Python tests: dead code in the method's
    bundle, and tests of it that still ran. What the earlier generation wrote and this one does not is removed when
    unchanged since (its recorded SHA-256), and named; a changed one is kept, and named."""
    monkeypatch.chdir(tmp_path)
    assert new("mine", "--no-input", "--set", "runtime=both") == 0
    Path("mine/tests/test_method.py").write_text("# my own test\n", encoding="utf-8")
    Path("mine/notes.txt").write_text("my notes\n", encoding="utf-8")
    capsys.readouterr()
    assert new("mine", "--answers", "mine/.mt-eval-answers.json", "--set", "runtime=node", "--no-input",
               "--force") == 0
    err = capsys.readouterr().err
    assert err == ("mt-eval new: removed 3 file(s) of the earlier generation that this one does not write "
                   "(unchanged since): pipeline.py, tests/node_side.py, tests/test_parity.py\n"
                   "mt-eval new: kept 1 file(s) of the earlier generation that this one does not write, as you "
                   "changed them: tests/test_method.py (remove them if the method no longer needs them)\n")
    assert sorted(p.relative_to("mine").as_posix() for p in Path("mine").rglob("*") if p.is_file()) == [
        ".gitignore", ".mt-eval-answers.json", "README.md", "glossary.tsv", "method.json", "method_card.json",
        "notes.txt", "package.json", "sample/README.md", "sample/corpus.jsonl", "tests/test_method.py",
        "tests/translate.test.js", "translate.js"]
    assert Path("mine/notes.txt").read_text(encoding="utf-8") == "my notes\n"


def test_a_recorded_path_outside_the_plugin_is_never_removed(tmp_path, monkeypatch, capsys):
    """The answers file is the plugin's own text: a path in it that leads out of the plugin is not touched."""
    import hashlib
    import json

    monkeypatch.chdir(tmp_path)
    assert new("mine", "--no-input") == 0
    Path("outside.txt").write_text("mine\n", encoding="utf-8")
    answers = json.loads(Path("mine/.mt-eval-answers.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(b"mine\n").hexdigest()
    answers["files"].update({"../outside.txt": digest, str(tmp_path / "outside.txt"): digest})
    Path("mine/.mt-eval-answers.json").write_text(json.dumps(answers), encoding="utf-8")
    assert new("mine", "--no-input", "--force") == 0
    assert Path("outside.txt").read_text(encoding="utf-8") == "mine\n"
    assert "removed" not in capsys.readouterr().err
