"""``mt-eval decide run`` when things go wrong around the method: a disk that fills while results are written, Ctrl-C
while a large corpus is read or during a run started with --force, results for rows that were never sent, and a
large corpus read at msgspec's speed — each said with what to do, nothing decided lost."""

from __future__ import annotations

import json
import logging
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from test_decide_edges import ADEQUACY, RULES, corpus, decide, uniform

ROWS = sum(1 for line in ADEQUACY.read_text(encoding="utf-8").splitlines() if line.strip())


def limited_file_size(size: int, soft_only: bool = False):
    """A child's files can grow to ``size`` bytes: a write past it fails as on a full disk (EFBIG, not a signal).
    It writes no cached bytecode: CPython keeps a .pyc cut short at the limit, and every later import of that
    module (a plugin's, the SDK's) fails with "marshal data too short"."""
    def limit() -> None:
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # (in the child only, before it starts the program)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY if soft_only else size))
    return limit


def cli(*args: str, limit: int | None = None, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=limited_file_size(limit) if limit else None, **kw)


def test_a_disk_that_fills_while_results_are_written_stops_the_run_saying_how_to_go_on(tmp_path):
    """Before: a traceback of six "OSError: [Errno 28] No space left on device" in an exception group, and one more
    from closing the log."""
    out = tmp_path / "run"
    args = ("decide", "run", "--method", str(RULES), "--corpus", str(ADEQUACY), "--out", str(out), "--quiet",
            "--resamples", "0", "--batch-size", "2", "--concurrency", "1")
    full = cli(*args, limit=4000)
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr and "ExceptionGroup" not in full.stderr, full.stderr
    said = full.stderr.strip().splitlines()[-1]
    assert said.startswith(f"mt-eval decide: cannot write {out / 'results.jsonl'}: File too large; the run "
                           "stopped"), said
    assert "continue with the same command and --resume" in said
    assert not (out / "card.json").exists()
    resumed = cli(*args, "--resume")  # (room again: every row decided, none twice)
    assert resumed.returncode == 0, resumed.stderr
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert len(card["results"]) == ROWS and card["coverage"]["overall"]["failed"] == 0


def test_a_decision_card_that_cannot_be_written_is_said_and_leaves_no_temporary_file(tmp_path):
    """Before: a traceback, and card.json.tmp left in the run directory."""
    out = tmp_path / "run"
    args = ("decide", "run", "--method", str(RULES), "--corpus", str(ADEQUACY), "--out", str(out), "--quiet",
            "--resamples", "0")
    size = 20_000  # (room for the results, about 10 kB, not for the card that holds them, about 34 kB)
    full = cli(*args, limit=size)
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr, full.stderr
    assert f"cannot write {out / 'card.json'}: File too large" in full.stderr
    assert "--resume" in full.stderr
    assert sorted(p.name for p in out.iterdir()) == [".lock", "results.jsonl", "run.json"]
    assert cli(*args, "--resume").returncode == 0
    assert len(json.loads((out / "card.json").read_text(encoding="utf-8"))["results"]) == ROWS


SLOW = """
import asyncio


class Slow:
    async def decide(self, rows, config):
        await asyncio.sleep(0.2)
        return [{"id": row["id"], "answers": {name: {"probabilities": {"true": 0.5, "false": 0.5}}
                 for name, q in row["questions"].items()}} for row in rows]
"""
NOUL = {"type": "noul", "instructions": "Is it adequate?"}


def test_ctrl_c_in_a_run_started_with_force_says_to_resume_in_place_of_force(make_plugin, tmp_path):
    """Before: "Continue with the same command and --resume": argparse refuses --resume with --force, and the same
    command alone starts over, throwing the decided rows away."""
    rows = [{"id": f"r{i}", "state": {}, "questions": {"ok": NOUL}, "gold": {"ok": "true"}} for i in range(40)]
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    method = make_plugin({"name": "Slow", "entry_point": "pipeline:Slow", "implements": ["decide"],
                          "dependency_class": "S", "dependencies": []}, files={"pipeline.py": SLOW})
    out = tmp_path / "run"
    args = ["decide", "run", "--method", str(method), "--corpus", str(corpus), "--out", str(out), "--quiet",
            "--resamples", "0", "--batch-size", "1", "--concurrency", "1"]
    running = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", *args, "--force"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    with running:
        log = out / "results.jsonl"
        deadline = time.monotonic() + 60
        while (not log.exists() or log.stat().st_size == 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        running.send_signal(signal.SIGINT)
        said = running.communicate(timeout=60)[1]
    assert running.returncode == 130, said
    assert "Continue with --resume in place of --force: mt-eval decide run --method" in said, said
    command = said.strip().splitlines()[-1].split(": ", 2)[-1].split()
    assert "--force" not in command and command[-1] == "--resume"
    kept = log.read_text(encoding="utf-8").count("\n")
    assert kept >= 1
    assert cli(*command[1:]).returncode == 0
    assert len(json.loads((out / "card.json").read_text(encoding="utf-8"))["results"]) == 40


def test_ctrl_c_while_the_corpus_is_read_says_nothing_was_decided(tmp_path, monkeypatch, capsys):
    """Before: "finished rows are saved. Continue with the same command and --resume", while a large corpus was
    still being read and checked (seconds, for tens of thousands of rows), before any run directory."""
    from mt_eval.decisions import session

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "read_decision_corpus", interrupted)
    assert decide(RULES, ADEQUACY, tmp_path / "run") == 130
    said = capsys.readouterr().err
    assert "interrupted before the run started: nothing was decided" in said, said
    assert "finished rows are saved" not in said
    assert not (tmp_path / "run").exists()


STRAYS = """
        for result in out:
            result["id"] = "item-" + result["id"]  # (as a grader that renamed the rows)
        return out + ["not a result"]
"""


def test_results_for_rows_never_sent_are_said_not_dropped_without_a_word(make_plugin, tmp_path, caplog):
    """Before: every row failed "the method returned no result for this row", and nothing said what it had
    returned instead."""
    caplog.set_level(logging.WARNING, logger="mt_eval.decisions")
    assert decide(uniform(make_plugin, STRAYS), ADEQUACY, tmp_path / "run", "--batch-size", "4") == 4
    said = [r.getMessage() for r in caplog.records if "match no row" in r.getMessage()]
    assert len(said) == 3  # (the first three calls: a method does it in every one)
    assert said[0] == ('the method returned results that match no row it was sent (ids "item-adq-01", "item-adq-02", '
                       '"item-adq-03", "item-adq-04"; 1 item that is not an object); they were dropped (a result\'s '
                       'id is its row\'s id, a string)')
    assert said[2].endswith("; later calls' results that match no row are dropped without a word")


def test_a_guest_that_returns_results_for_rows_never_sent_is_said_as_in_process_thrice(make_plugin, tmp_path,
                                                                                       caplog):
    """Through a guest (--isolate), as in the process: the same words (the item that is not an object too), for the
    first three calls. Before: one line for each stray result of each batch, naming none of what the in-process
    warning names."""
    caplog.set_level(logging.WARNING)
    assert decide(uniform(make_plugin, STRAYS), ADEQUACY, tmp_path / "run", "--batch-size", "4", "--isolate") == 4
    said = [r.getMessage() for r in caplog.records if "match no row" in r.getMessage() or "unknown row" in
            r.getMessage()]
    assert len(said) == 3, said
    assert said[0] == ('the method returned results that match no row it was sent (ids "item-adq-01", "item-adq-02", '
                       '"item-adq-03", "item-adq-04"; 1 item that is not an object); they were dropped (a result\'s '
                       'id is its row\'s id, a string)')
    assert said[2].endswith("; later calls' results that match no row are dropped without a word")


def test_a_corpus_of_clean_rows_is_read_without_the_strict_reading_and_a_bad_row_still_with_it(tmp_path,
                                                                                              monkeypatch):
    """Before: every row went through the strict reading, 0.6 ms a row: 12 s for 20,000 rows before a row was sent
    (and before Ctrl-C could say anything true)."""
    from mt_eval.decisions import corpus as dcorpus

    strict: list[str] = []
    real = dcorpus.decode_value

    def counted(data, type_, *, file, **kw):
        strict.append(file)
        return real(data, type_, file=file, **kw)

    monkeypatch.setattr(dcorpus, "decode_value", counted)
    assert len(dcorpus.read_decision_corpus(ADEQUACY).rows) == ROWS
    assert strict == []
    lines = ADEQUACY.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1]) | {"extra": 1}
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(dcorpus.DecisionCorpusError) as raised:
        dcorpus.read_decision_corpus(tmp_path / "bad.jsonl")
    assert [p.message for p in raised.value.problems] == ['unknown field "extra"']
    assert strict == [f"{tmp_path / 'bad.jsonl'}:2 (row \"adq-02\")"]


CULPRIT = '''
import asyncio


class Culprit:
    """Raises on the row marked "raise", and sleeps past any deadline on the row marked "hang"."""

    async def decide(self, rows, config):
        for row in rows:
            if row["state"].get("raise"):
                raise RuntimeError("cannot judge " + row["id"])
            if row["state"].get("hang"):
                await asyncio.sleep(60)
        return [{"id": row["id"], "answers": {"q": {"probabilities": {"true": 0.75, "false": 0.25}}}} for row in rows]
'''


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
@pytest.mark.parametrize("fault", ["raise", "hang"])
def test_a_call_that_fails_as_a_whole_fails_only_the_row_it_fails_on(make_plugin, tmp_path, isolate, fault):
    """Before, in the process (not in a guest), a method that raised or timed out on one row failed every row of its
    batch: 7 rows that it judged well lost, with the culprit's error."""
    plugin = make_plugin({"name": "Culprit", "entry_point": "pipeline:Culprit", "implements": ["decide"],
                          "dependency_class": "S", "dependencies": []}, files={"pipeline.py": CULPRIT})
    rows = corpus(tmp_path / "rows.jsonl", [
        {"id": f"r{i}", "state": {fault: i == 5}, "questions": {"q": {"type": "noul", "instructions": "?"}},
         "gold": {"q": True}} for i in range(8)])
    out = tmp_path / "run"
    assert decide(plugin, rows, out, "--batch-size", "8", "--timeout", "0.5", *(["--isolate"] if isolate else [])) == 0
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    failed = {r["id"]: r["error"] for r in card["results"] if r["error"] is not None}
    assert list(failed) == ["r5"], failed
    assert ("cannot judge r5" if fault == "raise" else "0.5 s") in failed["r5"]  # (a guest words its timeout itself)
    assert card["coverage"]["overall"] == {"asked": 8, "answered": 7, "failed": 1, "scored": 7}


BLOCKER = '''
import time


class Blocker:
    """Blocks its process on the row marked "block" (a synchronous call): the guest answers nothing, not even a
    cancel, until it is stopped."""

    async def decide(self, rows, config):
        if any(row["state"].get("block") for row in rows):
            time.sleep(8)
        return [{"id": row["id"], "answers": {"q": {"probabilities": {"true": 0.75, "false": 0.25}}}} for row in rows]
'''


def test_a_guest_blocked_by_one_row_fails_only_that_row_of_the_calls_in_flight(make_plugin, tmp_path):
    """Before, the run's own deadline cut the guest's host short before it sent the rows of the calls in flight
    again, each alone, to the guest that replaced the blocked one: every row failed, and the run exited 4."""
    plugin = make_plugin({"name": "Blocker", "entry_point": "pipeline:Blocker", "implements": ["decide"],
                          "dependency_class": "S", "dependencies": []}, files={"pipeline.py": BLOCKER})
    rows = corpus(tmp_path / "rows.jsonl", [
        {"id": f"r{i}", "state": {"block": i == 0}, "questions": {"q": {"type": "noul", "instructions": "?"}},
         "gold": {"q": True}} for i in range(4)])
    out = tmp_path / "run"
    assert decide(plugin, rows, out, "--isolate", "--batch-size", "2", "--concurrency", "2", "--timeout", "0.5") == 0
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    failed = {r["id"]: r["error"] for r in card["results"] if r["error"] is not None}
    assert list(failed) == ["r0"], failed
    assert card["coverage"]["overall"] == {"asked": 4, "answered": 3, "failed": 1, "scored": 3}
