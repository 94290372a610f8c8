"""Corpora as they arrive: compressed bytes under a name (or a pipe) that does not say so, parallel text whose
reference file has blank lines beside sentences, and a file that is no translation corpus — refused with what they
are and the fix, never misread."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.corpus import CorpusError, read_corpus


def show(capsys, *args: str) -> tuple[int, str]:
    code = main(["corpus", "show", *args])
    return code, capsys.readouterr().err


def test_compressed_bytes_are_named_with_the_command_that_unpacks_them_not_called_stray_nul_bytes(
        tmp_path: Path, capsys):
    text = b"Hello.\tHola.\nBye.\tAdi\xc3\xb3s.\n"
    (tmp_path / "dev.tsv").write_bytes(gzip.compress(text))
    (tmp_path / "xz.tsv").write_bytes(lzma.compress(text))
    (tmp_path / "bz.tsv").write_bytes(bz2.compress(text))
    code, err = show(capsys, str(tmp_path / "dev.tsv"))
    assert code == 1
    assert err.strip().endswith("dev.tsv: is gzip-compressed (its first bytes say so), not text; name it dev.tsv.gz, "
                                "or give the text it holds, e.g. zcat dev.tsv > dev.text.tsv"), err
    assert "xz.tsv: is xz-compressed (its first bytes say so), not text; give the text it holds, e.g. xzcat xz.tsv > " \
           "xz.text.tsv" in show(capsys, str(tmp_path / "xz.tsv"))[1]
    assert "is bzip2-compressed" in show(capsys, str(tmp_path / "bz.tsv"))[1]
    (tmp_path / "dev.eng").write_bytes(gzip.compress(b"Hello.\n"))
    code, err = show(capsys, "--source-file", str(tmp_path / "dev.eng"))
    assert code == 1 and "is gzip-compressed" in err and "NUL" not in err, err


def test_translate_file_names_an_xz_file_as_compressed(tmp_path: Path, capsys):
    (tmp_path / "dev.tsv.xz").write_bytes(lzma.compress(b"Hello.\tHola.\n"))
    code = main(["translate", str(Path(__file__).parent.parent / "examples" / "lexicon-eng-spa"),
                 "--file", str(tmp_path / "dev.tsv.xz")])
    err = capsys.readouterr().err
    assert code == 2
    assert "is xz-compressed (its first bytes say so), not text; give the text it holds, e.g. xzcat dev.tsv.xz > " \
           "dev.tsv" in err and "NUL" not in err, err


def test_a_blank_reference_line_beside_a_sentence_is_refused_with_its_line_not_scored_against_nothing(
        tmp_path: Path, capsys):
    source, reference = tmp_path / "dev.eng", tmp_path / "dev.spa"
    source.write_text("Hello.\nGood night.\n\nBye.\n")
    reference.write_text("Hola.\n\n\nAdiós.\n")  # (line 3 is blank in both: an empty segment, kept)
    code, err = show(capsys, "--source-file", str(source), "--reference-file", str(reference))
    assert code == 1
    assert err.strip().endswith("dev.spa: 1 source line of 4 has an empty reference line (line 2): either every entry "
                                "has a reference or none has; add the missing references (the files may be misaligned "
                                "from there), or leave out --reference-file to translate without scoring"), err
    reference.write_text("\n\n\n\n")
    code, err = show(capsys, "--source-file", str(source), "--reference-file", str(reference))
    assert code == 1 and "dev.spa: has only empty lines: no source line has a reference" in err, err
    reference.write_text("Hola.\nBuenas noches.\n\nAdiós.\n")
    assert show(capsys, "--source-file", str(source), "--reference-file", str(reference))[0] == 0


def test_a_stray_carriage_return_is_refused_with_a_removal_command_naming_the_file(tmp_path: Path, capsys):
    (tmp_path / "dev.tsv").write_bytes(b"Hello.\tHola.\nBye.\tAd\rios.\n")
    code, err = show(capsys, str(tmp_path / "dev.tsv"))
    assert code == 1 and "line 2 holds a carriage return" in err
    assert "remove the stray CR (e.g. tr -d '\\r' < dev.tsv > dev.lf.tsv)" in err, err
    (tmp_path / "dev.tsv.gz").write_bytes(gzip.compress(b"Hello.\tHola.\nBye.\tAd\rios.\n"))
    assert "(e.g. zcat dev.tsv.gz | tr -d '\\r' > dev.lf.tsv)" in show(capsys, str(tmp_path / "dev.tsv.gz"))[1]


@pytest.mark.parametrize(("lines", "said"), [
    ('{"id": "a", "label": "4"}\n{"id": "b", "distribution": {"3": 1.0}}\n',
     "no entry has a source text (its entries have 'id', 'label', 'distribution'): it is not a translation corpus; "
     'a translation corpus gives each entry a "source"'),
    ('{"id": "a", "sorce": "Hello."}\n{"id": "b", "sorce": "Bye."}\n',
     "no entry has a source text (its entries have 'id', 'sorce'); the entry has \"sorce\": did you mean "
     '"source"?'),
])
def test_a_file_whose_entries_have_no_source_at_all_is_said_once_not_an_error_an_entry(tmp_path, lines, said):
    """Before: grading labels given to run as its corpus gave 30 lines of "line N.source: missing source text"."""
    corpus = tmp_path / "labels.jsonl"
    corpus.write_text(lines, encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        read_corpus(corpus)
    assert len(refused.value.problems) == 1
    assert str(refused.value).startswith(f"corpus {corpus}: {said}"), str(refused.value)
