"""`mt-eval contamination` given odd values: an empty --method, --against, --corpus or --report, and a corpus that
is a directory, are each one line saying what is wrong and what to give, exit status 2, and no work done."""

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
