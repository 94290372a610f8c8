"""`mt-eval corpus show` as text a terminal is given: a file name's control characters (ESC, a line break) and a
value's invisible ones (U+202E, which turns around what follows it) are written as escapes, never obeyed."""

from __future__ import annotations

from pathlib import Path

from mt_eval.cli import main
from mt_eval.corpus.describe import summary_line
from mt_eval.corpus.reader import CorpusSpec, load_corpus

NAME = "dev\x1b[31m\nred"


def test_a_file_name_with_control_characters_is_shown_escaped_on_one_line(tmp_path: Path, capsys):
    """Before: the name was printed as it is, its ESC obeyed and its line break cutting the report in two."""
    corpus = tmp_path / f"{NAME}.tsv"
    corpus.write_text("Good morning.\tBuenos días.\n", encoding="utf-8")
    assert main(["corpus", "show", str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert out.splitlines()[0] == str(tmp_path / "dev\\x1b[31m\\nred.tsv")


def test_parallel_files_with_control_characters_are_shown_escaped(tmp_path: Path, capsys):
    source = tmp_path / f"{NAME}.eng"
    source.write_text("Good morning.\n", encoding="utf-8")
    assert main(["corpus", "show", "--source-file", str(source), "--pair", "eng>spa"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "  format      parallel text, one segment per line: dev\\x1b[31m\\nred.eng (sources)\n" in out
    assert f"  source      {tmp_path / 'dev'}\\x1b[31m\\nred.eng (1 lines" in out
    assert "dev\\x1b[31m\\nred.eng" in summary_line(load_corpus(CorpusSpec(source_file=source)))


def test_an_invisible_character_in_a_value_is_shown_as_its_escape(tmp_path: Path, capsys):
    """Before: U+202E went through (JSON does not escape it), turning around the rest of the line on a terminal."""
    corpus = tmp_path / "dev.tsv"
    corpus.write_text("id\tsource\treference\tnote\n1\tGood morning.\tBuenos días.\tsee \u202etxt.exe\n",
                      encoding="utf-8")
    assert main(["corpus", "show", str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and 'note       "see \\u202etxt.exe"' in out


def test_a_run_warns_of_a_corpus_with_control_characters_in_its_name_escaped(tmp_path: Path, capsys):
    """`mt-eval run`'s corpus warnings (a doubt, too few canaries for the gate) name the file as the rest of the run
    does: escaped, on one line. Before, the name's ESC reached the terminal in each warning."""
    root = Path(__file__).resolve().parent.parent
    corpus = tmp_path / f"{NAME}.tsv"
    corpus.write_text("".join(f"{i}\tGood morning {i}.\tBuenos días {i}.\n" for i in range(3)), encoding="utf-8")
    main(["run", "--method", str(root / "examples" / "lexicon-eng-spa"), "--corpus", str(corpus), "--columns",
          "id,source,reference", "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--no-contamination-check",
          "--latency-sample", "0"])
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning: corpus")]
    assert warnings and all("dev\\x1b[31m\\nred.tsv" in line for line in warnings)
    assert "\x1b" not in err
