"""Where a run is told to write, and what is there already: a symbolic link to nowhere, a directory or lock file
that cannot be written, a corpus among the files a run writes, a value that begins with a dash. Each is refused
before anything is translated, in one line that says what is wrong and how to fix it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from test_new_existing import unwritable
from test_store_file_modes import SETPRIV, as_a_user

HERE = Path(__file__).parent
SCRIPTED = HERE / "fixtures" / "methods"
ROOT = os.geteuid() == 0  # (root is stopped by an immutable flag, anyone else by the permissions: `unwritable`)


def run(tmp_path: Path, corpus: Path, out: Path, *more: str) -> int:
    return main(["run", "--method", str(SCRIPTED), "--corpus", str(corpus), "--out", str(out), "--quiet",
                 "--latency-sample", "0", "--no-contamination-check", "--pair", "eng>spa", *LENIENT, *more])


def corpus_at(path: Path) -> Path:
    entries = [{"id": f"e{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}."} for i in range(3)]
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = path.suffix == ".jsonl"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries) if lines else json.dumps(entries),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("below", ["", "sub/run"])
def test_an_out_through_a_symbolic_link_to_nowhere_names_the_link_and_where_it_points(tmp_path, capsys, below):
    """Before: "cannot create --out …/runs: No such file or directory", after trying 20 times."""
    corpus = corpus_at(tmp_path / "corpus.jsonl")
    (tmp_path / "runs").symlink_to(tmp_path / "gone")
    out = tmp_path / "runs" / below if below else tmp_path / "runs"
    assert run(tmp_path, corpus, out) == 1
    assert capsys.readouterr().err == (
        f"mt-eval run: cannot create --out {out}: {tmp_path / 'runs'} is a symbolic link to {tmp_path / 'gone'}, "
        "which does not exist: make the directory it points to, or give --out another place\n")
    assert not (tmp_path / "gone").exists()


def test_an_out_that_cannot_be_written_in_says_how_to_make_it_writable(tmp_path, capsys):
    """Before: "cannot write to --out …: Operation not permitted", with no fix."""
    corpus = corpus_at(tmp_path / "corpus.jsonl")
    out = tmp_path / "run"
    out.mkdir()
    with unwritable(out):
        assert run(tmp_path, corpus, out) == 1
        assert run(tmp_path, corpus, out / "new") == 1
    fix = f"clear its immutable flag (chattr -i {out})" if ROOT else f"make it writable for you (chmod u+w {out})"
    said = capsys.readouterr().err.splitlines()
    reason = os.strerror(1 if ROOT else 13)
    assert said == [f"mt-eval run: cannot write to --out {out}: {reason}; {fix}, or give --out another place",
                    f"mt-eval run: cannot create --out {out / 'new'}: {reason}; {fix}, or give --out another place"]
    assert sorted(path.name for path in out.iterdir()) == []


@pytest.mark.skipif(not ROOT, reason="the immutable flag: root only (a user's unreadable lock file has its own test)")
def test_an_immutable_lock_file_says_to_clear_the_flag_not_to_chmod(tmp_path, capsys):
    """Before: "…; make it readable and writable for you (chmod u+rw …/.lock)", which does nothing to the flag."""
    corpus = corpus_at(tmp_path / "corpus.jsonl")
    out = tmp_path / "run"
    assert run(tmp_path, corpus, out) == 0
    capsys.readouterr()
    with unwritable(out / ".lock"):
        assert run(tmp_path, corpus, out, "--resume") == 1
    assert capsys.readouterr().err == (
        f"mt-eval run: cannot open {out / '.lock'}, the lock file that keeps a second process out of the run "
        f"directory {out}: Operation not permitted; clear its immutable flag (chattr -i {out / '.lock'}), or choose "
        "another --out\n")


@pytest.mark.parametrize(("name", "force"), [("results.jsonl", ["--force"]), ("card.json", ["--force"]),
                                             ("card.json", ["--resume"])])
def test_a_corpus_among_the_files_a_run_writes_is_refused_and_kept(tmp_path, capsys, monkeypatch, name, force):
    """Before: with ``--out`` the corpus's directory, ``--force`` deleted a corpus named ``results.jsonl`` or
    ``card.json`` once it was read (the card then took the place of the second), and the card no longer
    verified: its corpus was gone."""
    corpus = corpus_at(tmp_path / "data" / f"corpus{Path(name).suffix}")
    kept = corpus.read_bytes()
    corpus = corpus.rename(tmp_path / "data" / name)
    monkeypatch.chdir(tmp_path / "data")
    assert run(tmp_path, corpus, Path("."), *force) == 1
    assert capsys.readouterr().err == (
        f"mt-eval run: the corpus {corpus} is {name}, a file the run writes in its directory (and --force deletes): "
        "move the corpus out of ., or choose another --out\n")
    assert corpus.read_bytes() == kept and not Path("run.json").exists()


@pytest.mark.parametrize("command", [["run", "--demo", "--out"], ["verify", "card.json", "--corpus"],
                                     ["locales", "--config"]])
def test_a_value_that_begins_with_a_dash_is_shown_how_to_give_it(capsys, command):
    """Before: "argument --out: expected one argument", which a value such as -run1 reads as (Node's
    mt-eval-locales takes ``--config -project``; argparse cannot tell it from an option)."""
    with pytest.raises(SystemExit) as stop:
        main([*command, "-mine"])
    assert stop.value.code == 2
    option = command[-1]
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f": argument {option}: expected one argument (-mine begins with a dash, so it reads as an option: give it "
        f"as {option}=-mine)")
    with pytest.raises(SystemExit):
        main(command)  # (no value at all: nothing to say about a dash)
    assert capsys.readouterr().err.splitlines()[-1].endswith(f": argument {option}: expected one argument")


def test_an_option_given_where_a_value_was_left_out_is_not_shown_as_that_value(capsys):
    """``--out --force`` left the directory out: it is not a directory named "--force" to give as --out=--force."""
    for given in ("--force", "--limit=3"):
        with pytest.raises(SystemExit) as stop:
            main(["run", "--demo", "--out", given])
        assert stop.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].endswith(": argument --out: expected one argument")


def read_only(path: Path, writable: bool = False) -> None:
    """``chmod -R a-w`` on ``path`` (``u+w`` with ``writable``)."""
    for item in [path, *path.rglob("*")]:
        item.chmod(item.stat().st_mode | 0o200 if writable else item.stat().st_mode & ~0o222)


@pytest.mark.skipif(ROOT and SETPRIV is None, reason="root writes any file, and no setpriv is here")
def test_a_complete_run_in_a_read_only_directory_resumes_as_complete_and_one_with_work_left_says_why_not(tmp_path,
                                                                                                          capsys):
    """Before: "cannot write to --out …" (exit 1) for a resume of a complete run, which has nothing to write."""
    corpus = corpus_at(tmp_path / "corpus.jsonl")
    out = tmp_path / "run"
    assert run(tmp_path, corpus, out) == 0
    resume = ["run", "--method", str(SCRIPTED), "--corpus", str(corpus), "--out", str(out), "--quiet",
              "--latency-sample", "0", "--no-contamination-check", "--pair", "eng>spa", *LENIENT, "--resume"]
    resumes_read_only(out, resume, said="mt-eval run", prog="mt-eval run")


def resumes_read_only(out: Path, resume: list[str], *, said: str, prog: str) -> None:
    """``resume`` (a command line) of the complete run in ``out``, made read-only: complete, exit 0, nothing
    written; then, its card deleted, refused before any work, saying the directory cannot be written (the
    complete-run line starts ``said``, the refusal ``prog``)."""
    files = {path.name: path.read_bytes() for path in out.iterdir()}
    read_only(out)
    try:
        done = as_a_user(*resume)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout == (f"{said}: the run in {out} is complete already: nothing to resume; its card "
                               f"{out / 'card.json'} is unchanged\n")
        read_only(out, writable=True)
        (out / "card.json").unlink()
        read_only(out)
        done = as_a_user(*resume)
        assert done.returncode == 1
        assert done.stderr == (f"{prog}: cannot resume {out}: the run has work left (entries to translate, or its "
                               f"card to write), and {out} cannot be written (Permission denied): make the run's files "
                               f"writable for you (chmod -R u+w {out}), or copy {out} where you can write and resume "
                               "the copy\n")
    finally:
        read_only(out, writable=True)
    del files["card.json"]
    assert {path.name: path.read_bytes() for path in out.iterdir()} == files  # (nothing written)
