"""The contamination check reads a bundle's git history: a corpus text committed and then deleted, kept in an
older version of a file, in a commit message or in a bare repository is found; the checked-out files are not
read twice; and without git the verdict cannot be clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from contamination_support import (  # noqa: F401 (the bundle and corpus fixtures)
    REFERENCE,
    SOURCE,
    bundle_fixture,
    check,
    corpus_fixture,
    located,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed (apt-get install git)")


def git(repository: Path, *argv: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false",
                    "-c", "init.defaultBranch=main", *argv], cwd=repository, check=True, capture_output=True)


def commit(repository: Path, message: str = "change") -> None:
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "--allow-empty", "-m", message)


@pytest.mark.parametrize("packed", [False, True])
def test_a_text_committed_then_deleted_is_found_in_the_history(bundle, corpus, packed: bool):
    """Before: the object store was skipped ("its compressed history") and the verdict was clean, though the
    method's author had only deleted the file holding the references."""
    git(bundle, "init", "-q")
    (bundle / "refs.txt").write_text(f"{REFERENCE}\n")
    commit(bundle)
    (bundle / "refs.txt").unlink()
    (bundle / "notes.txt").write_text("nothing here\n")
    commit(bundle)
    if packed:
        git(bundle, "gc", "-q", "--aggressive")
    report = check(bundle, corpus)
    assert report.status == "contaminated"
    assert located(report) == {(".git/objects:refs.txt", 1, "t1", "reference")}
    said = next(f for f in report.findings if f.kind == "history")
    assert said.file == ".git/objects" and said.effect == "info"
    assert "read through git" in said.message and "2 more are files checked out beside it" in said.message


def test_the_checked_out_files_are_read_once_and_an_older_version_is_read_too(bundle, corpus):
    git(bundle, "init", "-q")
    (bundle / "data.txt").write_text(f"{SOURCE}\n")
    commit(bundle)
    (bundle / "data.txt").write_text(f"{REFERENCE}\n")
    commit(bundle)
    report = check(bundle, corpus)
    assert located(report) == {("data.txt", 1, "t1", "reference"), (".git/objects:data.txt", 1, "t1", "source")}


def test_a_text_in_a_commit_message_a_stash_or_a_dangling_object_is_found(bundle, corpus):
    git(bundle, "init", "-q")
    commit(bundle, f"Add the data\n\n{REFERENCE}")
    (bundle / "method.json").write_text(f'{{"stashed": "{SOURCE}"}}\n')
    git(bundle, "stash", "-q")
    subprocess.run(["git", "hash-object", "-w", "--stdin"], input=f"{REFERENCE} {SOURCE}\n", text=True,
                   cwd=bundle, check=True, capture_output=True)
    report = check(bundle, corpus)
    files = {file for file, _line, _entry, _side in located(report)}
    assert any(file.startswith(".git/objects:commit ") for file in files)
    assert ".git/objects:method.json" in files  # (the stash's version of the file)
    assert any(len(file) == len(".git/objects:") + 40 for file in files)  # (a blob no commit names, by its id)


def test_a_bare_repository_of_any_name_is_read_through_git(bundle, corpus, tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    (work / "corpus.tsv").write_text(f"{SOURCE}\t{REFERENCE}\n")
    commit(work)
    git(work, "clone", "-q", "--bare", str(work), str(bundle / "weights.bin"))
    report = check(bundle, corpus)
    assert located(report) == {("weights.bin/objects:corpus.tsv", 1, "t1", "source"),
                               ("weights.bin/objects:corpus.tsv", 1, "t1", "reference")}


def test_git_runs_none_of_the_repositorys_commands(bundle, corpus, tmp_path: Path):
    """A repository's config can name programs (core.fsmonitor, hooks): reading it must not run them."""
    git(bundle, "init", "-q")
    (bundle / "refs.txt").write_text(f"{REFERENCE}\n")
    commit(bundle)
    ran = tmp_path / "ran"
    git(bundle, "config", "core.fsmonitor", f"touch {ran}; true")
    git(bundle, "config", "core.hooksPath", str(tmp_path))
    report = check(bundle, corpus)
    assert located(report) == {("refs.txt", 1, "t1", "reference")}
    assert not ran.exists()


def test_without_git_the_history_is_not_read_and_the_verdict_cannot_be_clean(bundle, corpus, monkeypatch):
    git(bundle, "init", "-q")
    (bundle / "notes.txt").write_text("nothing here\n")
    commit(bundle)
    monkeypatch.setenv("PATH", "/nonexistent")
    report = check(bundle, corpus)
    assert report.hits == [] and report.status == "unverified"
    said = next(f for f in report.findings if f.kind == "history")
    assert said.effect == "unverified"
    assert said.message == ("the repository's history was not read: git is not installed, or not on PATH (Debian: "
                            "apt-get install git)")


def borrowing(bundle: Path, tmp_path: Path, text: str) -> Path:
    """A repository in ``bundle`` that borrows objects from one outside it (whose one file holds ``text``),
    with a commit of its own: the outside repository."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    (elsewhere / "refs.txt").write_text(text)
    commit(elsewhere)
    git(bundle, "init", "-q")
    (bundle / ".git/objects/info").mkdir(parents=True, exist_ok=True)
    (bundle / ".git/objects/info/alternates").write_text(f"{elsewhere}/.git/objects\n")
    (bundle / "notes.txt").write_text("nothing here\n")
    commit(bundle)
    return elsewhere


@pytest.mark.parametrize("packed", [False, True])
def test_objects_borrowed_from_a_store_outside_the_bundle_are_not_the_bundles(bundle, corpus, tmp_path: Path,
                                                                              packed: bool):
    """Before: ``--batch-all-objects`` read the alternates too, and a text in some other repository on the
    machine was reported as the bundle's (``.git/objects:refs.txt``)."""
    elsewhere = borrowing(bundle, tmp_path, f"{REFERENCE}\n")
    (bundle / "notes.txt").unlink()
    commit(bundle, f"Drop the notes\n\n{SOURCE}")
    if packed:
        git(bundle, "repack", "-q", "-a", "-d", "-l")
    report = check(bundle, corpus)
    assert {(file.split(" ")[0], side) for file, _line, _entry, side in located(report)} == {
        (".git/objects:commit", "source"), (".git/COMMIT_EDITMSG", "source")}
    said = [f.message for f in report.findings if f.kind == "history" and "borrows" in f.message]
    assert said == [f"it borrows objects from {(elsewhere / '.git/objects').resolve()}, outside the bundle "
                    "(objects/info/alternates): those are not the bundle's and were not read"]


def test_objects_borrowed_from_a_store_inside_the_bundle_are_read(bundle, corpus):
    shared = bundle / "shared"
    shared.mkdir()
    git(shared, "init", "-q", "--bare")
    subprocess.run(["git", "--git-dir", str(shared), "hash-object", "-w", "--stdin"], input=f"{REFERENCE}\n",
                   text=True, check=True, capture_output=True)
    git(bundle, "init", "-q")
    (bundle / ".git/objects/info").mkdir(parents=True, exist_ok=True)
    (bundle / ".git/objects/info/alternates").write_text("../../shared/objects\n")
    commit(bundle)
    report = check(bundle, corpus)
    assert {file.split(":")[0] for file, _line, _entry, _side in located(report)} == {
        ".git/objects", "shared/objects"}
    assert not [f for f in report.findings if "borrows" in f.message]


def test_a_damaged_pack_index_beside_borrowed_objects_leaves_the_verdict_unverified(bundle, corpus, tmp_path: Path):
    borrowing(bundle, tmp_path, "nothing here\n")
    git(bundle, "repack", "-q", "-a", "-d", "-l")
    for index in (bundle / ".git/objects/pack").glob("*.idx"):
        index.chmod(0o644)
        index.write_bytes(b"not an index")
    report = check(bundle, corpus)
    assert report.hits == [] and report.status == "unverified"
    said = next(f for f in report.findings if f.kind == "history")
    assert said.effect == "unverified" and said.message.startswith(
        "the repository's history was not read: git show-index failed on it: ")
