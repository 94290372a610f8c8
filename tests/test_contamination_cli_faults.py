"""`mt-eval contamination` and the check of `mt-eval run` where output fails, the user stops them, or text hides
behind invisible characters: the verdict and the report are not lost, and what happened is said."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import pytest

from contamination_support import REFERENCE, SOURCE, check, empty_bundle, three_entry_corpus
from mt_eval.cli import main
from mt_eval.contamination import control, engine, run_check
from mt_eval.contamination.record import not_run
from mt_eval.corpus.reader import read_corpus
from mt_eval.errors import InterruptedBefore
from test_decide_faults import limited_file_size

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
CAREFUL = Path(__file__).parent / "fixtures" / "contamination" / "careful-eng-spa"


def mt_eval(*args: str, stdout=subprocess.PIPE, preexec_fn=None, timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, cwd=REPO, preexec_fn=preexec_fn)


def test_a_report_cut_short_leaves_the_previous_one_whole(tmp_path):
    """Before, a report that could not be written whole (here: over the file-size limit, as on a full disk)
    replaced the previous report with its first bytes, which are not JSON."""
    report = tmp_path / "report.json"
    report.write_text('{"status": "clean"}\n')

    shown = mt_eval("contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--report", str(report),
                    "--quiet", preexec_fn=limited_file_size(1000))
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


def test_a_report_to_a_named_pipe_nobody_reads_is_an_error_not_a_wait(tmp_path):
    """Before, --report naming a named pipe (FIFO) that no process reads waited for a reader forever, the verdict
    never printed."""
    pipe = tmp_path / "report.json"
    os.mkfifo(pipe)
    shown = mt_eval("contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--report", str(pipe),
                    "--quiet", timeout=30)
    assert shown.returncode == 2 and "CLEAN: no corpus text found" in shown.stdout
    assert (f"its report could not be written to {pipe}: it is a named pipe that no process is reading (start its "
            f"reader first, e.g. cat {pipe}); give --report a writable file, or --json to print it") in shown.stderr
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # (the report fits in the pipe's buffer)
    try:
        shown = mt_eval("contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--report", str(pipe),
                        "--quiet", timeout=30)
        assert shown.returncode == 0, shown.stderr
        assert msgspec.json.decode(os.read(reader, 1 << 20))["status"] == "clean"
    finally:
        os.close(reader)


def test_each_corpus_is_named_with_its_size_before_it_is_read(capsys):
    """Before, the first words on standard error came after the corpora were read: seconds of silence for a
    corpus of a few hundred megabytes."""
    assert main(["contamination", "--method", str(CAREFUL), "--corpus", str(DEMO)]) == 0
    said = capsys.readouterr().err.splitlines()
    assert said[0] == f"contamination: reading corpus {DEMO} ({DEMO.stat().st_size / 1e3:,.1f} kB)"
    assert said[1].startswith("contamination: indexing ")


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


def test_a_long_ngram_shorter_than_the_ngram_is_refused_naming_both(capsys):
    """Before, --long-ngram 5 with --ngram 6 was accepted: no shared run is shorter than --ngram, so the
    long-ngram rule silently meant --ngram."""
    assert main(["contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--ngram", "6",
                 "--long-ngram", "5"]) == 2
    assert ("mt-eval contamination: --long-ngram 5 must be at least --ngram 6: raise the first or lower the "
            "second") in capsys.readouterr().err


def test_an_ngram_longer_than_the_default_long_ngram_takes_the_long_ngram_along():
    """--long-ngram, when not given, follows a --ngram above its default (12): --ngram 13 alone is not refused."""
    from mt_eval.cli import build_parser
    from mt_eval.cli.contamination import settings_from

    def settings(*flags: str):
        return settings_from(build_parser().parse_args(["contamination", "--method", str(CAREFUL), *flags]))

    assert (settings("--ngram", "13").ngram, settings("--ngram", "13").long_ngram) == (13, 13)
    assert settings("--ngram", "6").long_ngram == 12
    assert settings("--ngram", "6", "--long-ngram", "20").long_ngram == 20
    with pytest.raises(ValueError, match="--long-ngram 12 must be at least --ngram 13"):
        settings("--ngram", "13", "--long-ngram", "12")


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


def test_a_resume_that_skips_the_check_keeps_what_an_earlier_session_found(tmp_path):
    """Before, `--resume --no-contamination-check` recorded the check as not run on the card, though the first
    session had run it on the same code and corpus."""
    corpus = run_corpus()
    found = run_check.check_for_run(CAREFUL, corpus, tmp_path, code_sha256="c", enabled=True, reuse=False, quiet=True)
    assert found.status == "clean"
    kept = run_check.check_for_run(CAREFUL, corpus, tmp_path, code_sha256="c", enabled=False, reuse=True, quiet=True)
    assert kept == found
    for skipped in (dict(code_sha256="c", reuse=False), dict(code_sha256="edited", reuse=True)):  # (nothing to keep)
        record = run_check.check_for_run(CAREFUL, corpus, tmp_path, enabled=False, quiet=True, **skipped)
        assert record.status == "not-run" and record.reasons == ["skipped with --no-contamination-check"]


# a check stopped once its planted control has copied the bundle: it says where the copy is, then waits
CHECK_WAITING_IN_ITS_CONTROL = """
import sys, time
from mt_eval.contamination import control
from mt_eval.contamination.engine import check_bundle

copy_bundle = control._copy_bundle

def copy_and_wait(bundle, root):
    copy_bundle(bundle, root)
    print(root.parent, flush=True)
    time.sleep(120)

control._copy_bundle = copy_and_wait
check_bundle(sys.argv[1], [sys.argv[2]])
"""


def test_a_control_copy_left_by_a_killed_check_is_removed_and_one_in_use_is_kept(tmp_path, monkeypatch):
    """Before, the copy of the bundle a check killed by SIGKILL left in the temporary directory stayed there."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()

    def check_in_its_control() -> tuple[subprocess.Popen[str], Path]:
        child = subprocess.Popen([sys.executable, "-c", CHECK_WAITING_IN_ITS_CONTROL, str(CAREFUL), str(DEMO)],
                                 stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temporary)})
        assert child.stdout is not None
        return child, Path(child.stdout.readline().strip())

    killed, abandoned = check_in_its_control()
    running, in_use = check_in_its_control()
    try:
        killed.kill()
        killed.wait()
        assert abandoned.parent == temporary and (abandoned / CAREFUL.name / "method.json").is_file()
        monkeypatch.setattr(tempfile, "tempdir", str(temporary))
        monkeypatch.setattr(control, "SETTING_UP_S", 0.0, raising=False)  # (the copies are a second old)
        assert engine.check_bundle(CAREFUL, [DEMO]).status == "clean"
        assert not abandoned.exists(), "the killed check's copy is still there"
        assert (in_use / CAREFUL.name / "method.json").is_file(), "the running check's copy was removed"
        assert list(temporary.iterdir()) == [in_use]  # (and this check's own copy is gone)
    finally:
        for child in (killed, running):
            child.kill()
            child.communicate()
