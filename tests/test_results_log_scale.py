"""The results log at scale: the ids a run wrote folded into hashes, never an entry appended twice, the entries
still to translate found with one reading of the log, and a resumed run holding the ids of its log, not its results."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from mt_eval.corpus import on_disk
from mt_eval.corpus.on_disk import EntriesOnDisk
from mt_eval.corpus.reader import read_corpus
from result_logs import result, write_log


def corpus_file(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": f"sentence {i}", "reference": f"frase {i}"}) + "\n"
                            for i in range(count)))
    return path


def test_the_log_folds_the_ids_it_wrote_and_still_never_appends_one_twice(tmp_path: Path, monkeypatch, caplog):
    from mt_eval.harness.results_log import ResultsLog

    monkeypatch.setattr(ResultsLog, "FOLD_AFTER", 2)
    monkeypatch.setattr("mt_eval.harness.results_log.hash", lambda text: len(text), raising=False)  # shared
    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "old", "predicted": "from an earlier session"}\n')
    log = ResultsLog(path, known={"old"})  # (a resumed run's: folded at once)
    log.append([result("a"), result("bb"), result("c")])  # "a" and "bb" folded into hashes; "c" is recent
    assert log.holds("a") and log.holds("bb") and log.holds("c") and log.holds("old")
    assert not log.holds("d") and not log.holds("ee")  # their "hash" is one a written id has: the log says no
    log.append([result("d"), result("a"), result("d"), result("old")])
    log.close()
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["old", "a", "bb", "c", "d"]
    assert "not recording 3 entries (a, d, old) again" in caplog.text


def test_ids_folded_over_many_folds_are_all_held_and_no_others(tmp_path: Path, monkeypatch):
    import random

    import numpy as np

    from mt_eval.harness.results_log import ResultsLog

    monkeypatch.setattr(ResultsLog, "FOLD_AFTER", 64)
    ids = [f"entry-{i}" for i in range(10_000)]
    random.Random(3).shuffle(ids)
    log = ResultsLog(tmp_path / "results.jsonl")
    for start in range(0, len(ids), 37):
        log.append([result(entry_id) for entry_id in ids[start:start + 37]])
    folded = log._folded
    assert len(folded) >= 9_900 and bool(np.all(folded[:-1] <= folded[1:]))  # one sorted array of their hashes
    assert all(log.holds(entry_id) for entry_id in ids[::50])  # (each found hash is confirmed by reading the log)
    assert not any(log.holds(f"other-{i}") for i in range(2_000))
    log.close()


def test_the_entries_without_a_result_are_found_with_one_reading_of_the_log(tmp_path: Path, monkeypatch):
    """Asking `holds` for each entry read the log once per folded id: 10,000 entries took 27 s, 20,000 took 111 s.
    `unlogged` confirms every folded hash in one reading (a run moved into a guest mid-way asks it)."""
    from mt_eval.harness import results_log
    from mt_eval.harness.results_log import ResultsLog

    monkeypatch.setattr(ResultsLog, "FOLD_AFTER", 64)
    path = tmp_path / "results.jsonl"
    log = ResultsLog(path)
    for start in range(0, 3_000, 50):
        log.append([result(f"e{i}") for i in range(start, start + 50)])  # all folded but the last few
    entries = [{"id": f"e{i}", "source": "s"} for i in range(3_100)]
    decoded = []
    real = results_log._decode_id
    monkeypatch.setattr(results_log, "_decode_id", lambda line: decoded.append(1) or real(line))
    assert [entry["id"] for entry in log.unlogged(entries)] == [f"e{i}" for i in range(3_000, 3_100)]
    assert len(decoded) <= 3_000  # one reading at most, however many entries it holds
    log.close()


def test_a_hash_shared_with_a_logged_id_does_not_hide_an_entry(tmp_path: Path, monkeypatch):
    from mt_eval.harness.results_log import ResultsLog

    monkeypatch.setattr(ResultsLog, "FOLD_AFTER", 2)
    monkeypatch.setattr("mt_eval.harness.results_log.hash", lambda text: len(text), raising=False)  # shared
    log = ResultsLog(tmp_path / "results.jsonl")
    log.append([result("a"), result("bb"), result("ccc")])  # "a" and "bb" folded; "ccc" recent
    entries = [{"id": i, "source": "s"} for i in ("a", "x", "bb", "yy", "ccc", "zzz", "dddd")]
    assert [entry["id"] for entry in log.unlogged(entries)] == ["x", "yy", "zzz", "dddd"]
    log.close()


def test_with_nothing_logged_the_entries_come_back_as_they_are(tmp_path: Path, monkeypatch):
    from mt_eval.harness.results_log import ResultsLog

    monkeypatch.setattr("mt_eval.corpus.jsonfile.ON_DISK_FROM", 0)  # the corpus stays on disk, however small
    monkeypatch.setattr(on_disk, "BLOCK", 3)

    corpus = read_corpus(corpus_file(tmp_path / "corpus.jsonl", 7))
    assert isinstance(corpus.entries, EntriesOnDisk)
    log = ResultsLog(tmp_path / "results.jsonl")
    assert log.unlogged(corpus.entries) is corpus.entries  # not read again, even from disk
    log.append([result("e2"), result("e5")])
    remaining = log.unlogged(corpus.entries)
    assert isinstance(remaining, EntriesOnDisk) and [e["id"] for e in remaining] == ["e0", "e1", "e3", "e4", "e6"]
    log.close()


def test_a_resumed_run_reads_the_ids_of_its_log_not_its_results(tmp_path: Path, caplog):
    from mt_eval.harness.results_log import ResultsLog, logged_ids, read_results

    path = write_log(tmp_path / "results.jsonl", [result("e0"), result("e1", error="boom"), result("e0", "again")],
                     tail=b'{"id": "e9", "pre')
    assert logged_ids(path) == set(read_results(path)) == {"e0", "e1"}  # a torn tail skipped, e0 once
    assert "records 1 entry (e0) more than once" in caplog.text
    log = ResultsLog(path, known=logged_ids(path))  # folded at once
    assert log.holds("e0") and log.holds("e1") and not log.holds("e2")
    log.close()
    damaged = write_log(tmp_path / "damaged.jsonl", [result("e0")], tail=b"not a result\n" + msgspec.json.encode(
        result("e1")) + b"\n")
    for read in (logged_ids, read_results):
        with pytest.raises(ValueError, match=r"line 2 is not a result; the log is damaged"):
            read(damaged)


def test_a_reader_may_hold_only_the_results_it_needs_and_still_sees_every_id(tmp_path: Path, caplog):
    from mt_eval.harness.results_log import read_results

    path = write_log(tmp_path / "results.jsonl", [result("e0"), result("e1", error="boom"), result("e2"),
                                                  result("e3", error="boom"), result("e1", error="again")])
    failed = read_results(path, keep=lambda r: r.error is not None)  # what a stopped run prints its failures from
    assert [(r.id, r.error) for r in failed.values()] == [("e1", "boom"), ("e3", "boom")]  # e1's first result
    assert "records 1 entry (e1) more than once" in caplog.text


def test_a_stopped_run_prints_its_failures_so_far_from_the_failed_results(tmp_path: Path, capsys):
    import sys

    from mt_eval.harness.outcome import print_failures_in_log

    path = write_log(tmp_path / "results.jsonl", [result("e0"), result("e1", error="boom"), result("e2"),
                                                  result("e3", error="boom"), result("e4", error="bang")])
    print_failures_in_log(path, 10, sys.stderr)
    assert capsys.readouterr().err.splitlines() == ["3 of 10 entries failed (2 distinct errors):",
                                                    "  2 × boom  (e.g. e1)", "  1 × bang  (e.g. e4)"]


def test_a_line_that_holds_an_entrys_id_but_no_usable_result_is_named_with_its_line_and_entry(tmp_path: Path):
    from mt_eval.harness.logged_results import LoggedResults
    from mt_eval.harness.results_log import read_results, repair

    unusable = b'{"id": "e1", "predicted": "x", "latency_s": null}\n'  # what Infinity became in JSON
    path = write_log(tmp_path / "results.jsonl", [result("e0")], tail=unusable + msgspec.json.encode(result("e2"))
                     + b"\n")
    entries = [{"id": f"e{i}", "source": "s"} for i in range(3)]
    with pytest.raises(ValueError, match=r"line 2 of entry e1 is not a usable result: Expected `float`, got `null` - "
                                         r"at `\$.latency_s`; `mt-eval run ... --resume` repairs the log"):
        list(LoggedResults(path, entries))
    with pytest.raises(ValueError, match=r"line 2 of entry e1 is not a result; the log is damaged"):
        read_results(path)
    assert repair(path) == [f"{path}: dropped 1 damaged line(s) (line 2 of entry e1); their entries are translated "
                            "again"]
    assert [r.id for r in LoggedResults(path, entries)] == ["e0", "e2"]
