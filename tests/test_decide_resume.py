"""`mt-eval decide run --resume` on a results log damaged before its end: the good lines are kept, the damaged
ones dropped and said, their rows decided again — as `mt-eval run --resume` repairs a translation run's log; and of
a run complete already: every file is left as it was, as `mt-eval run --resume` leaves a complete run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from test_decide_run import RECORDER, REVERSE, card_of, rows, run, write_corpus
from test_run_directory_lock import moved_while_running
from test_run_out_paths import resumes_read_only
from test_store_file_modes import SETPRIV


def damage(log: Path, *numbers: int) -> None:
    """Line ``n`` (from 1) cut short or garbled, for each of ``numbers``; the last line is left whole."""
    lines = log.read_text(encoding="utf-8").splitlines()
    for number in numbers:
        lines[number - 1] = lines[number - 1][:20] if number % 2 else "not a result"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_resume_keeps_the_rows_decided_and_says_which_lines_it_dropped(tmp_path, capsys):
    """Before: "results.jsonl:2: not a decision result; the log is damaged (start over with --force)", exit 1."""
    corpus = write_corpus(tmp_path / "c.jsonl", rows(6))
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    complete = card_of(out)
    log = out / "results.jsonl"
    damage(log, 2, 5)
    capsys.readouterr()
    assert run(REVERSE, corpus, out, "--resume") == 0
    assert capsys.readouterr().err.splitlines() == [
        f"mt-eval decide run: {log}: dropped 2 damaged line(s) (line 2, line 5); their rows are decided again"]
    resumed = card_of(out)
    assert resumed["run_id"] == complete["run_id"] and resumed["sessions"] == 2
    assert resumed["metrics"]["groups"] == complete["metrics"]["groups"]
    assert sorted(json.loads(line)["id"] for line in log.read_text().splitlines()) == [f"r{i}" for i in range(6)]


def test_only_the_rows_of_the_dropped_lines_are_decided_again(make_plugin, tmp_path, monkeypatch, capsys):
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("DECISIONS_RECORD", str(record))
    method = make_plugin({"name": "Recorder", "entry_point": "pipeline:Recorder", "implements": ["decide"],
                          "dependency_class": "S", "dependencies": []}, files={"pipeline.py": RECORDER})
    corpus = write_corpus(tmp_path / "c.jsonl", rows(6))
    out = tmp_path / "run"
    assert run(method, corpus, out) == 0
    log = out / "results.jsonl"
    damaged = [json.loads(line)["id"] for line in log.read_text().splitlines()[2:4]]
    damage(log, 3, 4)
    with log.open("a", encoding="utf-8") as file:  # and a row that is no row of this corpus
        file.write(json.dumps({"id": "elsewhere"}) + "\n")
    record.unlink()
    assert run(method, corpus, out, "--resume") == 0
    assert sorted(json.loads(line)["id"] for line in record.read_text().splitlines()) == sorted(damaged)
    said = capsys.readouterr().err
    assert (f"{log}: dropped results for 1 row (elsewhere) that is no row of this run (the log was edited, or comes "
            "from another run)") in said
    assert f"{log}: dropped 2 damaged line(s) (line 3, line 4); their rows are decided again" in said


def test_a_damaged_log_read_without_resuming_says_that_resume_repairs_it(tmp_path):
    from mt_eval.decisions.execution import DecisionLog

    out = tmp_path / "run"
    assert run(REVERSE, write_corpus(tmp_path / "c.jsonl", rows(3)), out) == 0
    damage(out / "results.jsonl", 2)
    with pytest.raises(ValueError) as raised:
        DecisionLog.read(out / "results.jsonl")
    assert str(raised.value) == (f"{out / 'results.jsonl'}: line 2 is not a result; the log is damaged: `mt-eval "
                                 "decide run ... --resume` repairs it (those rows are decided again)")


def test_a_resume_of_a_complete_decision_run_leaves_every_file_as_it_was_and_says_so(tmp_path, capsys):
    """As `mt-eval run --resume` of a complete run does. Before: the card was sealed again with a new finished_at,
    ``sessions`` 2 (in run.json too) and another content hash, for a session that decided nothing."""
    corpus = write_corpus(tmp_path / "c.jsonl", rows(4))
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    before = {name: (out / name).read_bytes() for name in ("card.json", "run.json", "results.jsonl")}
    capsys.readouterr()
    assert run(REVERSE, corpus, out, "--resume") == 0
    said = capsys.readouterr()
    assert said.out == (f"mt-eval decide run: the run in {out} is complete already: nothing to resume; its card "
                        f"{out / 'card.json'} is unchanged\n"), said
    assert {name: (out / name).read_bytes() for name in before} == before
    assert json.loads(before["card.json"])["sessions"] == 1
    # --isolate now: no row runs, so the card still says where its rows ran (before, it was rewritten "isolated")
    assert run(REVERSE, corpus, out, "--resume", "--isolate") == 0
    assert "nothing to resume" in capsys.readouterr().out
    assert {name: (out / name).read_bytes() for name in before} == before


@pytest.mark.parametrize("change", [("--resamples", "200"), ("--ece-bins", "5")])
def test_a_resume_that_would_score_a_complete_run_otherwise_rewrites_its_card(tmp_path, change):
    corpus = write_corpus(tmp_path / "c.jsonl", rows(4))
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    assert run(REVERSE, corpus, out, "--resume", *change) == 0
    card = card_of(out)
    assert card["sessions"] == 2 and card["errors"] == 0


def test_a_resume_of_a_decision_run_with_failures_or_an_edited_card_rewrites_the_card(tmp_path, capsys):
    """A row that failed keeps its result (a resume decides only the missing rows): the card is sealed again for the
    new session, as `mt-eval run --resume` does for a partial run; so is a card whose content hash no longer holds."""
    failing = rows(4)
    failing[1] = {**failing[1], "state": {**failing[1]["state"], "fail": True}}
    corpus = write_corpus(tmp_path / "c.jsonl", failing)
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    assert run(REVERSE, corpus, out, "--resume") == 0
    card = card_of(out)
    assert (card["sessions"], card["errors"]) == (2, 1)
    fine = write_corpus(tmp_path / "fine.jsonl", rows(4))
    out = tmp_path / "fine"
    assert run(REVERSE, fine, out) == 0
    (out / "card.json").write_text(json.dumps({**card_of(out), "errors": 1}), encoding="utf-8")
    capsys.readouterr()
    assert run(REVERSE, fine, out, "--resume") == 0
    assert "nothing to resume" not in capsys.readouterr().out
    assert (card_of(out)["sessions"], card_of(out)["errors"]) == (2, 0)


@pytest.mark.parametrize("command", [["run"], ["decide", "run"]])
def test_resume_help_says_what_a_resume_of_a_complete_run_does(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # (the help on one line each)
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    assert ("--resume              continue the interrupted run in --out (one that finished complete has nothing to "
            "resume: every file is left as it was)\n") in capsys.readouterr().out


def test_the_card_of_a_resumed_run_says_isolated_only_when_every_session_that_decided_rows_was(tmp_path):
    """Before: the card said the runtime of the last session, "python (isolated)" for a resume with --isolate that
    decided no row (its failed row keeps its result) or only the rows an in-process session had left."""
    failing = rows(4)
    failing[1] = {**failing[1], "state": {**failing[1]["state"], "fail": True}}
    corpus = write_corpus(tmp_path / "c.jsonl", failing)
    out = tmp_path / "failed"
    assert run(REVERSE, corpus, out) == 0
    assert run(REVERSE, corpus, out, "--resume", "--isolate") == 0
    assert (card_of(out)["sessions"], card_of(out)["method"]["runtime"]) == (2, "python")
    corpus = write_corpus(tmp_path / "fine.jsonl", rows(4))
    for first, then, said in ([], ["--isolate"], "python"), (["--isolate"], [], "python"), \
            (["--isolate"], ["--isolate"], "python (isolated)"):
        out = tmp_path / f"stopped-{len(first)}{len(then)}"
        assert run(REVERSE, corpus, out, *first) == 0
        log = out / "results.jsonl"  # (stopped after two rows: no card yet)
        log.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
        (out / "card.json").unlink()
        assert run(REVERSE, corpus, out, "--resume", *then) == 0
        assert (card_of(out)["sessions"], card_of(out)["method"]["runtime"]) == (2, said), (first, then)


def test_a_resume_with_another_concurrency_says_the_change_once(tmp_path, capsys):
    """Before, the batch size and concurrency were said twice, as the configuration's and as the settings':
    "the configuration, the settings changed … (the configuration: concurrency 2 → 4; the settings: concurrency
    2 → 4)"."""
    corpus = write_corpus(tmp_path / "c.jsonl", rows(3))
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out, "--concurrency", "2") == 0
    capsys.readouterr()
    assert run(REVERSE, corpus, out, "--resume", "--concurrency", "4", "--tolerance", "0.01") == 1
    assert capsys.readouterr().err.splitlines() == [
        f"mt-eval decide: cannot resume {out}: the configuration, the settings changed since the run started (the "
        "configuration: concurrency 2 → 4; the settings: tolerance 0.001 → 0.01); resume with the same inputs, or "
        "start over with --force"]


@pytest.mark.skipif(os.geteuid() == 0 and SETPRIV is None, reason="root writes any file, and no setpriv is here")
def test_a_complete_decision_run_in_a_read_only_directory_resumes_as_complete_and_one_with_work_left_says_why_not(
        tmp_path):
    """As `mt-eval run --resume` does. Before: "cannot write to --out …" (exit 1) for a complete run, which has
    nothing to write."""
    corpus = write_corpus(tmp_path / "c.jsonl", rows(4))
    out = tmp_path / "run"
    assert run(REVERSE, corpus, out) == 0
    resume = ["decide", "run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(out), "--quiet",
              "--resamples", "100", "--resume"]
    resumes_read_only(out, resume, said="mt-eval decide run", prog="mt-eval decide")


@pytest.mark.parametrize("then", ["moved", "moved, and another directory made at its path", "removed"])
def test_a_decision_run_whose_directory_is_moved_or_removed_while_it_runs_is_written_nowhere_else(tmp_path, then):
    """As `mt-eval run` (test_run_directory_lock). Before: "mt-eval decide: [Errno 2] No such file or directory:
    'run/.run.json.5202.tmp'"; with a directory made at the old path, the run wrote its run.json and a card saying
    no question was answered into that one (exit 4)."""
    corpus = write_corpus(tmp_path / "c.jsonl", [{**row, "state": {**row["state"], "sleep": 100}} for row in rows(40)])

    def command(out: str, *extra: str) -> list[str]:
        return [sys.executable, "-m", "mt_eval.cli", "decide", "run", "--method", str(REVERSE), "--corpus",
                str(corpus), "--out", out, "--batch-size", "1", "--concurrency", "2", "--resamples", "100", "--quiet",
                *extra]

    moved = moved_while_running(tmp_path, command, then, prog="mt-eval decide")
    if moved is None:
        return
    assert not (moved / "card.json").exists()
    resumed = subprocess.run(command(str(moved), "--resume"), cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    card = card_of(moved)
    assert card["sessions"] == 2 and card["errors"] == 0 and len(card["results"]) == 40
    assert card["run_id"] == json.loads((moved / "run.json").read_text())["run_id"]


def test_a_decision_run_whose_directory_is_moved_while_it_is_scored_writes_no_card_at_its_old_path(
        tmp_path, monkeypatch, capsys):
    """Scoring a large run takes a while. Before: the card went into the directory made at the old path since."""
    from mt_eval.decisions import session

    monkeypatch.chdir(tmp_path)
    scored = session.build_card

    def scored_while_moved(*given: object, **named: object) -> object:
        Path("run").rename("moved")
        Path("run").mkdir()
        return scored(*given, **named)

    monkeypatch.setattr(session, "build_card", scored_while_moved)
    assert run(REVERSE, write_corpus(tmp_path / "c.jsonl", rows(4)), Path("run")) == 1
    moved = tmp_path / "moved"
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"mt-eval decide: the run directory run was moved to {moved} while the run was using it, so nothing more is "
        f"written at run: everything it finished is saved in {moved}; finish it there with the same command and "
        f"--resume --out {moved}")
    assert list(Path("run").iterdir()) == [] and not (moved / "card.json").exists()
