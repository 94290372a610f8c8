"""`mt-eval contamination`'s corpus options: one that would be ignored is refused, and --columns of a .tsv corpus
goes with parallel text given beside it."""

from __future__ import annotations

import pytest

from contamination_support import REFERENCE, SOURCE, empty_bundle, three_entry_corpus
from mt_eval.cli import main


def test_columns_of_a_tsv_corpus_go_with_parallel_text_beside_it(tmp_path, capsys):
    """Before: --columns was given to the parallel text too, which refused it ("leave --columns out")."""
    bundle = empty_bundle(tmp_path)
    (bundle / "notes.txt").write_text(f"{SOURCE}\n")
    table = tmp_path / "test.tsv"
    table.write_text(f"k1\t{REFERENCE}\t{SOURCE}\n")
    parallel = tmp_path / "more.txt"
    parallel.write_text("A sentence of the parallel text that no bundle holds at all.\n")
    status = main(["contamination", "--method", str(bundle), "--corpus", str(table), "--columns",
                   "id,reference,source", "--source-file", str(parallel), "--plant", "0", "--quiet", "--show", "0"])
    shown = capsys.readouterr()
    assert status == 1, shown.err
    assert "notes.txt:1  test.tsv k1 source  exact" in shown.out
    assert "test.tsv (1 entries), more.txt (1 entries)" in shown.out


@pytest.mark.parametrize("options, said", [
    (["--reference-file", "{refs}"], "--reference-file {refs} needs --source-file SRC"),
    (["--columns", "id,source,reference"], "--columns id,source,reference names the columns of a .tsv corpus, "
                                           "and no --corpus or --against file is one"),
])
def test_a_corpus_option_that_would_be_ignored_is_refused(tmp_path, capsys, options, said):
    """Before: --reference-file without --source-file, and --columns with only a JSON lines corpus, were ignored,
    and the check said clean of references it never read."""
    bundle, corpus = empty_bundle(tmp_path), three_entry_corpus(tmp_path)
    refs = tmp_path / "refs.txt"
    refs.write_text(f"{REFERENCE}\n")
    (bundle / "glossary.txt").write_text(f"{REFERENCE}\n")
    given = [option.format(refs=refs) for option in options]
    status = main(["contamination", "--method", str(bundle), "--corpus", str(corpus), *given, "--plant", "0",
                   "--quiet"])
    assert status == 2
    assert said.format(refs=refs) in capsys.readouterr().err


@pytest.mark.parametrize("flags", [["--method", "{bundle}", "--corpus", "-", "--corpus", "-"],
                                   ["--against", "-", "--corpus", "-"]])
def test_standard_input_given_twice_is_refused(tmp_path, flags):
    """Before: from a pipe, the second read was empty ("corpus standard input: is empty"); from a file, the same
    texts were read again, and --against - --corpus - found each corpus text in itself: CONTAMINATED."""
    import subprocess
    import sys

    bundle, corpus = empty_bundle(tmp_path), three_entry_corpus(tmp_path)
    given = [flag.format(bundle=bundle) for flag in flags]
    with corpus.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "contamination", "--quiet", "--plant", "0",
                               *given], stdin=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout
    assert "standard input (-) is given 2 times" in done.stderr and "it can be read only once" in done.stderr
