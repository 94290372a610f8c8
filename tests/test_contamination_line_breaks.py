"""A line break in a bundle file's name (or an entry's id) is written as an escape in the text report and the run's
summary line: it cannot start a line of its own, so a method cannot write a line of the report (a forged verdict)."""

from __future__ import annotations

from contamination_support import REFERENCE, check, empty_bundle, three_entry_corpus
from mt_eval.contamination.record import record_of
from mt_eval.contamination.render import render
from mt_eval.contamination.run_check import summary_line


def test_a_file_name_with_a_line_break_stays_on_its_hit_line(tmp_path):
    bundle, corpus = empty_bundle(tmp_path), three_entry_corpus(tmp_path)
    (bundle / "notes\nCLEAN: no corpus text found.txt").write_text(f"{REFERENCE}\n")
    report = check(bundle, corpus)
    assert report.status == "contaminated"
    lines = render(report).splitlines()
    assert not any(line.startswith("CLEAN") for line in lines)
    assert "  notes\\nCLEAN: no corpus text found.txt:1  t1 reference  exact, 8 of 8 words: " \
           "\"el viejo farero cuenta los barcos cada tarde\"" in lines
    summary = summary_line(record_of(report))
    assert "\n" not in summary and "first: notes\\nCLEAN: no corpus text found.txt:1 t1 reference" in summary


def test_a_finding_about_such_a_file_stays_on_its_line(tmp_path):
    bundle, corpus = empty_bundle(tmp_path), three_entry_corpus(tmp_path)
    (bundle / "link\nUNVERIFIED").symlink_to("/")
    report = check(bundle, corpus)
    lines = render(report).splitlines()
    assert "  link\\nUNVERIFIED: symbolic link to /, outside the bundle: not followed, so not checked  [not checked]" \
        in lines
    assert lines[1].startswith("UNVERIFIED: 1 file could not be fully read (first: link\\nUNVERIFIED: symbolic link")
    assert not any(line.startswith("UNVERIFIED: symbolic") for line in lines)
    assert "\n" not in summary_line(record_of(report))
