"""`mt-eval contamination` given odd values: an empty --method, --against, --corpus or --report, a corpus that is
a directory or an archive, and a bundle that cannot be listed, are each one line saying what is wrong and what to
give, exit status 2, and no work done; names that are not UTF-8 and a read-only bundle are checked as any other."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
PLUGIN = REPO / "examples" / "lexicon-eng-spa"


@pytest.mark.parametrize(("args", "said"), [
    (["--method", "", "--corpus", str(DEMO)], "--method is empty: give the method plugin's directory, e.g. "
                                              "--method examples/lexicon-eng-spa"),
    (["--against", " ", "--corpus", str(DEMO)], "--against is empty: give the corpus to check"),
    (["--method", str(PLUGIN), "--corpus", ""], "--corpus is empty: give the evaluation corpus file, e.g. "
                                                "--corpus test.json"),
    (["--method", str(PLUGIN), "--corpus", str(DEMO), "--corpus", ""], "--corpus is empty"),
    (["--method", str(PLUGIN), "--corpus", str(DEMO), "--report", ""],  # (was: no report, and exit status 0)
     "--report is empty: give the file to write the JSON report to, e.g. --report report.json, or leave --report "
     "out"),
])
def test_an_empty_value_is_named_with_what_to_give(args, said, capsys):
    assert main(["contamination", "--quiet", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"mt-eval contamination: {said}") and err.count("\n") == 1, err


def test_a_corpus_that_is_a_directory_is_said_to_be_one_whatever_its_name(tmp_path: Path, capsys):
    for name in ("corpora", "corpora.json"):  # (the first was "unsupported format: ... name the file after its
        (tmp_path / name).mkdir()           # format, e.g. dev.tsv")
        assert main(["contamination", "--quiet", "--method", str(PLUGIN), "--corpus", str(tmp_path / name)]) == 2
        out, err = capsys.readouterr()
        assert (out, err) == ("", f"mt-eval contamination: corpus {tmp_path / name}: is a directory, not a corpus "
                                  "file; give the file itself\n")


@pytest.mark.parametrize(("name", "extract"), [("dev.zip", "unzip dev.zip"), ("dev.jsonl.xz", "unxz dev.jsonl.xz"),
                                               ("dev.tar", "tar -xf dev.tar")])
def test_a_corpus_in_an_archive_is_refused_with_how_to_extract_it(tmp_path: Path, capsys, name, extract):
    """(Was: read as a language code, "a .zip file is read as parallel text, one sentence per line: give it with
    --source-file FILE", which would read the archive's bytes as sentences.)"""
    (tmp_path / name).write_bytes(b"PK\x03\x04" + bytes(64))
    assert main(["contamination", "--quiet", "--against", str(tmp_path / name), "--corpus", str(DEMO)]) == 2
    out, err = capsys.readouterr()
    suffix = Path(name).suffix
    assert out == "" and err.endswith(f"; a {suffix} archive or compressed file is not opened (only gzip is): "
                                      f"extract the corpus file (e.g. {extract}) and give that\n"), err


def test_a_bundle_or_corpus_whose_own_name_is_not_utf8_is_named_with_its_escapes(tmp_path: Path, capsys):
    """(The report could not be written: UnicodeEncodeError, a traceback, for the bundle's name, the corpus's in
    the report, each hit and each planted text.)"""
    import json
    import os
    import shutil

    bundle, corpus = (Path(os.fsdecode(os.fsencode(tmp_path) + b"/" + name)) for name in (b"pl\xffg", b"c\xffc.json"))
    shutil.copytree(PLUGIN, bundle)
    shutil.copy(DEMO, corpus)
    (bundle / "notes.txt").write_text("the student wants to speak with the teacher\n")  # a sentence of the corpus
    for args, status in ([["--method", str(PLUGIN)], 0], [["--method", str(bundle)], 1],
                         [["--against", str(corpus)], 1]):
        assert main(["contamination", "--quiet", *args, "--corpus", str(corpus), "--json",
                     "--report", str(tmp_path / "report.json")]) == status, args
        out, err = capsys.readouterr()
        report = json.loads(out)
        assert err == "" and report == json.loads((tmp_path / "report.json").read_text())
        [summary] = report["corpora"]
        assert summary["name"] == "c\\udcffc.json" and summary["path"] == f"{tmp_path}/c\\udcffc.json"
        planted = (report["control"] or {"planted": []})["planted"]
        assert {*(h["corpus"] for h in report["hits"]), *(p["corpus"] for p in planted)} == {"c\\udcffc.json"}
    assert report["target"].endswith("c\\udcffc.json")
    assert main(["contamination", "--quiet", "--method", str(bundle), "--corpus", str(corpus)]) == 1
    out = capsys.readouterr().out
    assert f"contamination check of {tmp_path}/pl\\udcffg against c\\udcffc.json (36 entries)" in out
    assert "notes.txt:1  demo-12 source  exact" in out


def test_names_inside_a_bundle_that_are_not_utf8_are_written_with_their_escapes(tmp_path: Path, capsys):
    """A tar member, a link's target, a path in the git history and the Python file the control appends to, each
    named in bytes that are not UTF-8 (was: UnicodeEncodeError, a traceback, and exit status 1, "contaminated")."""
    import io
    import json
    import os
    import shutil
    import subprocess
    import tarfile

    sentence = b"the student wants to speak with the teacher\n"  # a sentence of the demo corpus
    bundle = tmp_path / "plugin"
    bundle.mkdir()
    raw = os.fsencode(bundle)
    with open(raw + b"/pipe\xe9.py", "w") as source:  # the only Python file: the control appends to it
        source.write("X = 1\n")
    os.symlink(b"/nowhere/caf\xe9", raw + b"/outside")
    assert main(["contamination", "--quiet", "--method", str(bundle), "--corpus", str(DEMO), "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["findings"][0]["message"].startswith("symbolic link to /nowhere/caf\\udce9, outside the bundle")
    assert report["control"]["recall"] == 1 and "pipe\\udce9.py" in {p["file"] for p in report["control"]["planted"]}

    with tarfile.open(bundle / "notes.tar", "w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tar:
        member = tarfile.TarInfo("caf\xe9.txt")
        member.size = len(sentence)
        tar.addfile(member, io.BytesIO(sentence))
    if shutil.which("git"):
        with open(raw + b"/gone-\xe9.txt", "wb") as gone:
            gone.write(sentence)
        git = ["git", "-C", str(bundle), "-c", "user.name=a", "-c", "user.email=a@b"]
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"], ["rm", "-q", "gone-*"],
                        ["commit", "-qm", "two"]):
            subprocess.run([*git, *command], check=True)
    assert main(["contamination", "--quiet", "--method", str(bundle), "--corpus", str(DEMO), "--json"]) == 1
    out, err = capsys.readouterr()
    hits = {hit["file"] for hit in json.loads(out)["hits"]}
    assert err == "" and "notes.tar:caf\\udce9.txt" in hits
    assert not shutil.which("git") or ".git/objects:gone-\\udce9.txt" in hits
    assert main(["contamination", "--quiet", "--method", str(bundle), "--corpus", str(DEMO)]) == 1
    assert "notes.tar:caf\\udce9.txt:1  demo-12 source  exact" in capsys.readouterr().out


def test_a_bundle_directory_that_cannot_be_listed_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch, capsys):
    """(Its mode 0311, or another user's 0711: the walk said "cannot list", then the control's copy raised
    PermissionError, a traceback, exit status 1.)"""
    import os
    import shutil

    bundle = tmp_path / "plugin"
    shutil.copytree(PLUGIN, bundle)
    real_scandir = os.scandir

    def refuse(path="."):
        if not isinstance(path, int) and os.fspath(path) == str(bundle):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refuse)
    assert main(["contamination", "--quiet", "--method", str(bundle), "--corpus", str(DEMO)]) == 2
    assert capsys.readouterr() == ("", f"mt-eval contamination: {bundle}: cannot list this directory: Permission "
                                       "denied; give the check read permission on the method plugin's directory\n")


def test_a_read_only_bundle_is_checked_and_its_control_copy_takes_the_planted_files(tmp_path: Path):
    """A bundle installed read-only (chmod -R a-w): its copy's directories kept the mode, so for a user other than
    root planting failed (PermissionError, a traceback, exit status 1)."""
    import os
    import shutil
    import stat

    from mt_eval.contamination.control import _copy_bundle
    from mt_eval.contamination.engine import check_bundle

    bundle = tmp_path / "plugin"
    shutil.copytree(PLUGIN, bundle)
    directories = [bundle, *(path for path in bundle.rglob("*") if path.is_dir())]
    for directory in directories:
        directory.chmod(0o555)
    try:
        _copy_bundle(bundle, tmp_path / "copy")
        copied = [tmp_path / "copy" / directory.relative_to(bundle) for directory in directories]
        assert all(os.stat(directory).st_mode & stat.S_IWUSR for directory in copied)
        assert check_bundle(bundle, [DEMO]).status == "clean"
    finally:
        for directory in directories:
            directory.chmod(0o755)
