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
