"""Publishing many cards at once: prepared by worker processes while this process stores them, in the
order given, each refused card named, a card that needs the wizard asked for here, a store error that keeps
what was stored, a failing worker that is an error and not a hang; and the shared parts (each corpus read
once, the canonical JSON hashed being the one stored)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.harness import verify
from mt_eval.leaderboard import bulk
from mt_eval.leaderboard.bulk import Options, publish_cards
from mt_eval.leaderboard.preparers import WorkerFailed
from mt_eval.leaderboard.store import Store, StoreError, open_store
from mt_eval.leaderboard.synthetic import CardFactory, write_card, write_corpus
from process_support import marked_environment, processes_marked
from store_faults import around_the_cards_commits

pytestmark = pytest.mark.skipif(os.name != "posix", reason="worker processes are forked on Linux")


def many(cards: CardFactory, root: Path, count: int, prefix: str = "", **options: object) -> list[Path]:
    return [write_card(cards.card(f"{prefix}m-{i:03d}", quality=(i % 5) / 5, run_id=f"{prefix}run-{i:03d}",
                                  **options), root / f"run-{i:03d}" / "card.json") for i in range(count)]


def second_store_write_raises(monkeypatch, error: BaseException) -> list[int]:
    """Make the store's second transaction raise ``error``; the sizes of the transactions tried."""
    calls: list[int] = []
    real = Store.publish

    def publish(self: Store, records, published_at, **kwargs):
        calls.append(len(records))
        if len(calls) == 2:
            raise error
        return real(self, records, published_at, **kwargs)

    monkeypatch.setattr(Store, "publish", publish)
    return calls


def publish_with_faults(paths: list[Path], root: Path, monkeypatch, capsys, *, status: int) -> tuple[int, str]:
    """``mt-eval publish`` of ``paths`` into a new store under the faults ``monkeypatch`` set, which must exit with
    ``status``: (the cards the store then holds, what was said on stderr)."""
    db = str(root / "board.db")
    assert main(["publish", *map(str, paths), "--db", db, "--no-input"]) == status
    err = capsys.readouterr().err
    monkeypatch.undo()
    with open_store(db) as store:
        return store.count(), err


def test_many_cards_are_published_by_workers_in_the_order_given(cards, tmp_path: Path, store_url: str, capsys):
    paths = many(cards, tmp_path, 70)
    tampered = json.loads(paths[5].read_text())
    tampered["results"][0]["predicted"] = "edited"
    paths[5].write_text(json.dumps(tampered))
    given = [*paths[:40], paths[3], tmp_path / "absent" / "card.json", *paths[40:]]
    assert main(["publish", *map(str, given), "--db", store_url, "--json", "--no-input"]) == 1
    captured = capsys.readouterr()
    reports = json.loads(captured.out)
    assert [r["card"] for r in reports] == [str(p) for p in given]  # every card given, in order
    assert [r["status"] for r in reports if r["card"] in (str(paths[5]), str(given[41]))] == ["refused", "refused"]
    published = [r for r in reports if r["status"] == "published"]
    assert len(published) == 69 and [r["id"] for r in published] == sorted(r["id"] for r in published)
    [again] = [r for r in reports if r["status"] == "duplicate"]
    assert again["card"] == str(paths[3]) and "already published as" in again["message"]
    assert f"{paths[5]}: it does not verify" in captured.err and "$.content_sha256" in captured.err
    assert "absent/card.json: cannot read it" in captured.err
    with open_store(store_url) as store:
        assert store.count() == 69


def test_a_card_that_needs_the_wizard_is_asked_for_here_among_many(cards, tmp_path: Path):
    paths = many(cards, tmp_path, 66)
    bare = write_card(cards.card("bare-one", bare=True, run_id="bare-run"), tmp_path / "bare" / "card.json")
    answers = iter(["", "A lexicon lookup.", "rule-based", "glossary", "no", ""])
    asked = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        answer = next(answers, None)
        if answer is None:
            raise EOFError
        return answer

    with open_store(str(tmp_path / "board.db")) as store:
        result = publish_cards(store, [*paths[:30], bare, *paths[30:]], Options(ask=ask, workers=2))
    assert result.store_error is None and result.stored == 67 and asked
    [card] = [c for c in result.cards if c.path == bare]
    assert card.outcome is not None and card.outcome.status == "published"
    assert card.prepared is not None and card.prepared.card_source.startswith("wizard")
    assert (tmp_path / "bare" / "method_card.json").is_file()


def test_a_store_error_stops_the_publish_and_keeps_what_was_stored(cards, tmp_path: Path, monkeypatch, capsys):
    paths = many(cards, tmp_path, 80)
    calls = second_store_write_raises(monkeypatch, StoreError("cannot write to the leaderboard store: disk I/O error"))
    kept, err = publish_with_faults(paths, tmp_path, monkeypatch, capsys, status=1)
    assert kept == calls[0] > 0 and f"disk I/O error; the {kept} cards stored before it are kept" in err
    assert (f"; {80 - kept} cards were not stored: once the store is fixed, run the same command again (the stored "
            "ones are refused as duplicates)") in err  # (how many had not been said)


@pytest.mark.parametrize("failure", ["raises", "dies"])
def test_a_failing_worker_is_an_error_not_a_hang(cards, tmp_path: Path, monkeypatch, failure: str):
    paths = many(cards, tmp_path, 70)
    real = bulk._prepare

    def broken(path: Path, *args, **kwargs):
        if path == paths[50]:
            if failure == "dies":
                os._exit(3)
            raise RuntimeError("a bug in preparing")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(bulk, "_prepare", broken)
    expected = "exit code 3" if failure == "dies" else "RuntimeError: a bug in preparing"
    with open_store(str(tmp_path / "board.db")) as store, pytest.raises(WorkerFailed, match=expected):
        publish_cards(store, paths, Options(no_input=True, workers=2))


def test_each_corpus_is_read_once_for_many_cards(tmp_path: Path, monkeypatch):
    from mt_eval.corpus import reader

    first = CardFactory(write_corpus(tmp_path / "first.json", seed=1), resamples=20)
    second = CardFactory(write_corpus(tmp_path / "second.json", seed=2), resamples=20)
    paths = many(first, tmp_path / "a", 12) + many(second, tmp_path / "b", 12, prefix="b-")
    read = []
    real = reader.load_corpus
    monkeypatch.setattr(reader, "load_corpus", lambda spec: read.append(spec.main_path) or real(spec))
    with open_store(str(tmp_path / "board.db")) as store:
        result = publish_cards(store, paths, Options(no_input=True, workers=1))
    assert result.stored == 24 and sorted(read) == [tmp_path / "first.json", tmp_path / "second.json"]


def test_the_canonical_json_hashed_is_the_sorted_encoding_that_is_stored():
    keys = ["card_version", "content_sha256", "contamination", "corpus", "content", "content_sha256a", "Z", "é",
            "contént", "~", "\U0001f600", "con"]
    values = [1, "x", None, 1.5, {"b": [1, {"z": 2, "y": None}], "a": "é"}]
    rng = random.Random(7)
    for _ in range(2000):
        data = {key: rng.choice(values) for key in rng.sample(keys, rng.randint(0, len(keys)))}
        digest, canonical = verify.canonical_json(data)
        assert digest == verify.canonical_sha256(data)
        assert canonical == msgspec.json.encode(data, order="sorted")


def test_progress_is_shown_while_many_cards_are_published(cards, tmp_path: Path, capsys):
    paths = many(cards, tmp_path, 70)
    assert main(["publish", *map(str, paths), "--db", str(tmp_path / "board.db"), "--no-input"]) == 0
    err = capsys.readouterr().err
    assert "verifying: 70/70" in err and "0 errors" in err


def test_one_bad_card_is_named_and_the_others_are_published(cards, tmp_path: Path, store_url: str, capsys):
    paths = many(cards, tmp_path, 70)
    paths[20].write_text("{ not json")
    assert main(["publish", *map(str, paths), "--db", store_url, "--no-input"]) == 1
    err = capsys.readouterr().err
    assert f"mt-eval publish: {paths[20]}: it does not verify" in err and "stopped" not in err
    with open_store(store_url) as store:
        assert store.count() == 69


@pytest.mark.parametrize("bad", ["tampered", "conflict"])  # (a duplicate, stored already, does not stop it)
def test_fail_fast_stops_at_the_first_card_not_published_and_keeps_those_before(cards, tmp_path: Path, capsys,
                                                                                bad: str):
    paths = many(cards, tmp_path, 90)
    if bad == "tampered":
        data = json.loads(paths[45].read_text())
        data["results"][0]["predicted"] = "edited"
        paths[45].write_text(json.dumps(data))
        given, stop = paths, paths[45]
    else:  # the run id of a card before it, other content
        stop = write_card(cards.card("other", quality=0.5, run_id="run-003"), tmp_path / "other" / "card.json")
        given = [*paths[:45], paths[3], stop, *paths[45:]]
    db = str(tmp_path / "board.db")
    assert main(["publish", *map(str, given), "--db", db, "--no-input", "--fail-fast"]) == 1
    err = capsys.readouterr().err
    assert f"stopped at {stop} (--fail-fast); the 45 cards stored before it are kept" in err
    assert "cards were not tried: run the same command again" in err
    with open_store(db) as store:
        assert sorted(r["run_id"] for r in store.rows()) == [f"run-{i:03d}" for i in range(45)]


def test_ctrl_c_keeps_the_cards_stored_and_ends_every_worker(cards, tmp_path: Path, monkeypatch, capsys):
    import multiprocessing

    paths = many(cards, tmp_path, 80)
    calls = second_store_write_raises(monkeypatch, KeyboardInterrupt())
    kept, err = publish_with_faults(paths, tmp_path, monkeypatch, capsys, status=130)
    assert multiprocessing.active_children() == []
    assert kept == calls[0] > 0 and f"interrupted; the {kept} cards stored before it are kept" in err
    assert f"{80 - kept} cards were not tried" in err


def test_ctrl_c_as_a_transaction_commits_still_counts_its_cards_as_stored(cards, tmp_path: Path, monkeypatch,
                                                                          capsys):
    """Before, a Ctrl-C that came while the first batch committed had its cards stored and reported as "nothing was
    published; 30 cards were not tried"."""
    import signal

    paths = many(cards, tmp_path, 30)
    # (delivered at once: the moment after the commit)
    around_the_cards_commits(monkeypatch, after=lambda: signal.raise_signal(signal.SIGINT))
    kept, err = publish_with_faults(paths, tmp_path, monkeypatch, capsys, status=130)
    assert kept > 0 and f"interrupted; the {kept} cards stored before it are kept" in err, err
    assert (f"{30 - kept} cards were not tried" in err) if kept < 30 else ("not tried" not in err)


def test_ctrl_c_at_the_terminal_ends_the_workers_and_keeps_what_was_stored(tmp_path: Path):
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    slow = CardFactory(write_corpus(tmp_path / "corpus.json", entries=60), resamples=1000)
    paths = many(slow, tmp_path, 400)
    db = tmp_path / "board.db"
    marker, environment = marked_environment()
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "publish", *map(str, paths), "--db", str(db),
                                "--no-input"], env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline, stored = time.monotonic() + 120, 0
    while stored == 0 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        try:
            with sqlite3.connect(db) as connection:
                stored = connection.execute("SELECT count(*) FROM cards").fetchone()[0]
        except sqlite3.Error:
            pass
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: to the whole process group
    _, err = process.communicate(timeout=60)
    with sqlite3.connect(db) as connection:
        kept = connection.execute("SELECT count(*) FROM cards").fetchone()[0]
    assert process.returncode == 130, err.decode()
    assert 0 < kept < len(paths) and f"interrupted; the {kept} cards stored before it are kept" in err.decode()
    assert "Traceback" not in err.decode()
    time.sleep(0.5)
    assert processes_marked(marker) == []


def test_a_card_with_a_name_too_long_for_the_store_is_refused_alone_on_both_backends(cards, tmp_path: Path,
                                                                                     store_url: str, capsys):
    """Before, PostgreSQL refused the whole batch ("value too long for type character varying(200)", naming no
    card) and SQLite stored it."""
    paths = many(cards, tmp_path, 5)
    long = write_card(cards.card("m" * 201, quality=0.5, run_id="run-long"), tmp_path / "long" / "card.json")
    assert main(["publish", str(paths[0]), str(long), *map(str, paths[1:]), "--db", store_url, "--no-input"]) == 1
    err = capsys.readouterr().err
    assert (f"{long}: its method_id is 201 characters long, and the store holds at most 200: 'mmmm") in err
    assert "give the method a shorter method_id in its method.json" in err
    with open_store(store_url) as store:
        assert sorted(r["run_id"] for r in store.rows()) == [f"run-{i:03d}" for i in range(5)]
    assert main(["publish", str(long), str(paths[0]), "--db", store_url, "--no-input", "--json"]) == 1
    assert [c["status"] for c in json.loads(capsys.readouterr().out)] == ["refused", "duplicate"]
    late = json.loads(write_card(cards.card("m-late", quality=0.5, run_id="run-late"), tmp_path / "late.json")
                      .read_text())  # (a time written to the attosecond: a card not written by `mt-eval run`)
    late["finished_at"] = late["finished_at"][:19] + ".123456789012345678+00:00"
    late["content_sha256"] = verify.canonical_sha256(late)
    (tmp_path / "late.json").write_text(json.dumps(late))
    assert main(["publish", str(tmp_path / "late.json"), "--db", store_url, "--no-input"]) == 1
    assert "its finished_at is 44 characters long, and the store holds at most 40" in capsys.readouterr().err


def test_a_publisher_gives_up_on_a_store_another_writer_holds_on_both_backends(cards, tmp_path: Path,
                                                                               store_url: str, monkeypatch, capsys):
    """Before, on PostgreSQL, a publisher stopped with Ctrl-Z kept the next one waiting for ever, silently."""
    import sqlalchemy as sa

    from mt_eval.leaderboard import store_engine
    from mt_eval.leaderboard.migrations import lock
    from mt_eval.leaderboard.store import resolve_url

    paths = many(cards, tmp_path, 2)
    open_store(store_url).close()  # (created before the other writer takes it)
    monkeypatch.setattr(store_engine, "BUSY_TIMEOUT_S", 1)
    engine = sa.create_engine(resolve_url(store_url))
    with engine.connect() as holder:
        if engine.dialect.name == "sqlite":
            holder.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            holder.begin()
            lock(holder)
        assert main(["publish", *map(str, paths), "--db", store_url, "--no-input"]) == 1
    engine.dispose()
    err = capsys.readouterr().err
    assert "another publisher has been writing it for over 1 s (" in err
    assert "run this again when that one is done, or stop it" in err


def test_a_publisher_killed_outright_takes_its_workers_with_it(tmp_path: Path):
    """Before, SIGKILL (kill -9, the OOM killer) left both workers sleeping for ever, holding the store open: each
    held the read end of its own pipe, so its sends never failed."""
    import signal
    import subprocess
    import sys
    import time

    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    slow = CardFactory(write_corpus(tmp_path / "corpus.json", entries=60), resamples=1000)
    paths = many(slow, tmp_path, 200)
    marker, environment = marked_environment()
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "publish", *map(str, paths), "--db",
                                str(tmp_path / "board.db"), "--no-input"], env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(processes_marked(marker)) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)  # (the publisher and its two workers)
    assert process.poll() is None, "the publish ended before its workers could be seen"
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    deadline = time.monotonic() + 10
    while processes_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_marked(marker) == []


def test_many_cards_give_the_same_results_as_one_at_a_time(cards, tmp_path: Path, capsys):
    import sqlite3

    from mt_eval.leaderboard.store import COLUMNS

    paths = many(cards, tmp_path, 70)
    data = json.loads(paths[9].read_text())
    data["results"][0]["predicted"] = "edited"
    paths[9].write_text(json.dumps(data))
    given = [*paths[:30], paths[2], *paths[30:]]
    together, apart = str(tmp_path / "together.db"), str(tmp_path / "apart.db")
    assert main(["publish", *map(str, given), "--db", together, "--no-input", "--json"]) == 1
    reports = json.loads(capsys.readouterr().out)
    one_by_one = []
    for path in given:
        main(["publish", str(path), "--db", apart, "--no-input", "--json"])
        one_by_one += json.loads(capsys.readouterr().out or "[]")

    def rows(db: str) -> list[tuple]:
        columns = ", ".join(c for c in COLUMNS if c != "published_at")
        with sqlite3.connect(db) as connection:
            return connection.execute(f"SELECT id, {columns} FROM cards ORDER BY id").fetchall()

    assert len(rows(together)) == 69 and rows(together) == rows(apart)
    assert [{k: v for k, v in r.items() if k != "message"} for r in reports] == [
        {k: v for k, v in r.items() if k != "message"} for r in one_by_one]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_card_that_breaks_its_check_is_named_and_the_others_are_published(cards, tmp_path: Path, monkeypatch,
                                                                           capsys, workers: int):
    """A resealed card with metrics but no results, and a card whose check meets a fault of mt-eval itself: each
    is one refusal with its reason, not a traceback that ends the batch."""
    from mt_eval.harness.verify import canonical_sha256

    paths = many(cards, tmp_path, 70)
    emptied = json.loads(paths[10].read_text())
    emptied["results"] = []
    emptied["content_sha256"] = canonical_sha256(emptied)
    paths[10].write_text(json.dumps(emptied))
    real = bulk.complete

    def complete(path: Path, *args, **kwargs):
        if path == paths[30]:
            raise KeyError("a bug in completing")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(bulk, "complete", complete)
    with open_store(str(tmp_path / "board.db")) as store:
        result = publish_cards(store, paths, Options(no_input=True, workers=workers))
        assert store.count() == 68 and result.stored == 68
    errors = {str(item.path): str(item.error) for item in result.cards if item.error is not None}
    assert list(errors) == [str(paths[10]), str(paths[30])]
    assert "holds a result for none of its corpus's scored entries" in errors[str(paths[10])]
    assert errors[str(paths[30])].startswith("checking it failed unexpectedly (KeyError: 'a bug in completing', at ")
    assert "a fault of mt-eval" in errors[str(paths[30])]
