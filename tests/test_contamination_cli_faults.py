"""`mt-eval contamination` and the check of `mt-eval run` where output fails, the user stops them, or text hides
behind invisible characters: the verdict and the report are not lost, and what happened is said."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from contamination_support import REFERENCE, SOURCE, check, empty_bundle, three_entry_corpus
from mt_eval.cli import main
from mt_eval.contamination import engine, run_check
from mt_eval.contamination.record import not_run
from mt_eval.corpus.reader import read_corpus
from mt_eval.errors import InterruptedBefore

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
CAREFUL = Path(__file__).parent / "fixtures" / "contamination" / "careful-eng-spa"


def mt_eval(*args: str, stdout=subprocess.PIPE, preexec_fn=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, cwd=REPO, preexec_fn=preexec_fn)


def test_a_report_cut_short_leaves_the_previous_one_whole(tmp_path):
    """Before, a report that could not be written whole (here: over the file-size limit, as on a full disk)
    replaced the previous report with its first bytes, which are not JSON."""
    report = tmp_path / "report.json"
    report.write_text('{"status": "clean"}\n')

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))  # (Python ignores SIGXFSZ: the write fails)

    shown = mt_eval("contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--report", str(report),
                    "--quiet", preexec_fn=small_files)
    assert shown.returncode == 2, shown.stderr
    assert "CLEAN: no corpus text found" in shown.stdout
    assert f"its report could not be written to {report}: File too large" in shown.stderr
    assert report.read_text() == '{"status": "clean"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # (no temporary file left)


def test_a_report_can_go_to_a_pipe(tmp_path):
    shown = mt_eval("contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--report", "/dev/stdout",
                    "--quiet")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count('"status": "clean"') == 1 and "CLEAN" in shown.stdout


def test_ctrl_c_says_how_far_the_check_got_and_that_nothing_was_written(tmp_path, monkeypatch, capsys):
    """Before, Ctrl-C during a long scan printed only "interrupted"."""
    def interrupted(bundle, corpora, settings, progress):
        if progress is not None:  # (it is given even with --quiet: the step reached is what Ctrl-C reports)
            progress("read 1,234 files, 5.6 MB")
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "check_bundle", interrupted)
    report = tmp_path / "report.json"
    assert main(["contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--report", str(report),
                 "--quiet"]) == 130
    said = capsys.readouterr()
    assert said.out == "" and not report.exists()
    assert ("mt-eval contamination: interrupted (last step: read 1,234 files, 5.6 MB): no verdict, and nothing was "
            f"written, not even --report {report}; run the command again to check") in said.err


def test_a_rule_between_two_options_names_the_options(capsys):
    """Before: "standalone_below (2) must be at least min_words (3)", names no flag has."""
    assert main(["contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--standalone-below", "2"]) == 2
    assert ("mt-eval contamination: --standalone-below 2 must be at least --min-words 3: raise the first or lower "
            "the second") in capsys.readouterr().err


@pytest.mark.parametrize("invisible", ["\u00ad", "\u200b", "\u200d", "\u2060", "\ufeff"])
def test_an_invisible_character_inside_a_word_does_not_hide_a_text(tmp_path, invisible):
    """Before, a soft hyphen or a zero-width space cut a word in two, so a text that reads exactly as the
    corpus's (and would be copied as such) was not found."""
    corpus, bundle = three_entry_corpus(tmp_path), empty_bundle(tmp_path)
    (bundle / "notes.md").write_text(SOURCE.replace("keeper", f"kee{invisible}per") + "\n"
                                     + REFERENCE.replace("farero", f"fa{invisible}rero") + "\n", encoding="utf-8")
    found = {(h.file, h.line, h.entry_id, h.side, h.kind) for h in check(bundle, corpus).hits}
    assert found == {("notes.md", 1, "t1", "source", "exact"), ("notes.md", 2, "t1", "reference", "exact")}


def run_corpus():
    return read_corpus(DEMO)


def test_run_interrupted_during_the_check_says_nothing_was_translated(tmp_path, monkeypatch):
    """Before, the run's own message followed: "finished entries are saved", while none had been translated."""
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "check_bundle", interrupted)
    try:  # (a bare KeyboardInterrupt would stop the tests themselves)
        run_check.check_for_run(CAREFUL, run_corpus(), tmp_path, code_sha256="c", enabled=True, reuse=False,
                                quiet=True)
    except KeyboardInterrupt as exc:
        stopped = exc
    assert isinstance(stopped, InterruptedBefore), "a bare KeyboardInterrupt: the run's message would follow"
    assert "interrupted during the contamination check, before translating (nothing was translated now" in \
        stopped.message
    assert "--no-contamination-check" in stopped.message
    assert not (tmp_path / run_check.RESULT_FILE).exists()


def test_resume_runs_again_a_check_that_could_not_run(tmp_path):
    """Before, a check that had failed (a transient error, an unreadable directory since fixed) was reused by
    every --resume, so the card kept "not-run"."""
    corpus = run_corpus()
    failed = run_check._Saved(code_sha256="c", corpus_sha256=corpus.sha256,
                              record=not_run("the check could not run: cannot list this directory"))
    (tmp_path / run_check.RESULT_FILE).write_bytes(msgspec.json.encode(failed))
    record = run_check.check_for_run(CAREFUL, corpus, tmp_path, code_sha256="c", enabled=True, reuse=True,
                                     quiet=True)
    assert record.status == "clean"
    again = run_check.check_for_run(CAREFUL, corpus, tmp_path, code_sha256="c", enabled=True, reuse=True,
                                    quiet=True)
    assert again == record  # (a check that ran is reused)
