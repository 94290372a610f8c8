"""The leaderboard store on both backends: migrations, duplicates, filters, failures that write nothing, and
parallel publishers that neither corrupt nor lose cards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import sqlalchemy as sa

from mt_eval.leaderboard.migrations import MIGRATIONS, Migration, SchemaError, migrate
from mt_eval.leaderboard.publish import prepare
from mt_eval.leaderboard.store import StoreError, open_store, resolve_url
from mt_eval.leaderboard.synthetic import write_card


def record(cards, tmp_path: Path, method_id: str, **options) -> dict:
    path = write_card(cards.card(method_id, **options), tmp_path / "cards" / f"{method_id}-{options}.json")
    return prepare(path, no_input=True).record


def test_opening_creates_the_schema_once_and_records_each_migration(store_url: str):
    with open_store(store_url) as store:
        with store.reading() as connection:
            versions = connection.execute(sa.text("SELECT version, description FROM schema_version")).all()
        assert [v for v, _ in versions] == [m.version for m in MIGRATIONS] and versions[0][1]
        assert store.count() == 0
    with open_store(store_url) as store, store.reading() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM schema_version")).scalar() == len(MIGRATIONS)


def test_publish_refuses_duplicates_and_a_changed_card_of_a_published_run(store_url: str, cards, tmp_path: Path):
    first = record(cards, tmp_path, "alpha", run_id="run-1")
    altered = record(cards, tmp_path, "alpha", run_id="run-1", quality=0.9)
    other = record(cards, tmp_path, "beta")
    with open_store(store_url) as store:
        [published] = store.publish([first], "2026-01-01T00:00:00+00:00")
        assert published.status == "published" and published.id > 0
        outcomes = store.publish([first, altered, other, other], "2026-01-02T00:00:00+00:00")
        assert [o.status for o in outcomes] == ["duplicate", "conflict", "published", "duplicate"]
        assert outcomes[0].id == outcomes[1].id == published.id
        assert outcomes[0].published_at == "2026-01-01T00:00:00+00:00"
        assert outcomes[3].id == outcomes[2].id
        assert store.count() == 2


def test_rows_filter_by_pair_corpus_and_either_class(store_url: str, cards, tmp_path: Path):
    records = [record(cards, tmp_path, "alpha", method_class="pipeline", dependency_class="S"),
               record(cards, tmp_path, "beta", method_class="raw-llm", dependency_class="A1")]
    with open_store(store_url) as store:
        store.publish(records, "2026-01-01T00:00:00+00:00")
        assert {r["method_id"] for r in store.rows()} == {"alpha", "beta"}
        assert [r["method_id"] for r in store.rows(classes=["raw-llm"])] == ["beta"]
        assert [r["method_id"] for r in store.rows(classes=["S"])] == ["alpha"]
        assert store.rows(pairs=["eng>fra"]) == []
        assert len(store.rows(corpora=["synthetic"])) == 2
        assert len(store.rows(corpora=[cards.corpus.sha256[:10]])) == 2
        key = store.rows(classes=["S"])[0]["key"]
        assert store.card(key)["method"]["method_id"] == "alpha"
        assert store.card("0000000000000000") is None


def test_a_failing_publish_writes_nothing(store_url: str, cards, tmp_path: Path):
    good = record(cards, tmp_path, "alpha")
    broken = {**record(cards, tmp_path, "beta"), "pair": None}  # violates NOT NULL after the good one
    with open_store(store_url) as store:
        with pytest.raises(StoreError, match="cannot write to the leaderboard store"):
            store.publish([good, broken], "2026-01-01T00:00:00+00:00")
        assert store.count() == 0


def test_a_failing_migration_leaves_the_store_as_it_was(store_url: str):
    def explode(connection: sa.Connection) -> None:
        connection.execute(sa.text("CREATE TABLE half_done (x INTEGER)"))
        raise RuntimeError("migration 2 failed")

    with open_store(store_url) as store:
        with pytest.raises(RuntimeError), store.engine.connect() as connection, connection.begin():
            migrate(connection, [*MIGRATIONS, Migration(2, "breaks", explode)])
        with store.reading() as connection:
            assert not sa.inspect(connection).has_table("half_done")
            assert connection.execute(sa.text("SELECT max(version) FROM schema_version")).scalar() == 1


def test_a_store_from_a_newer_mt_eval_is_refused(store_url: str):
    with open_store(store_url) as store, store.writing() as connection:
        connection.execute(sa.text("INSERT INTO schema_version VALUES (99, 'future', '2030-01-01')"))
    with pytest.raises(StoreError, match="version 99, newer than this mt-eval knows"):
        open_store(store_url)


def test_migrating_refuses_a_version_it_does_not_know(store_url: str):
    with open_store(store_url) as store, store.engine.connect() as connection, connection.begin(), \
            pytest.raises(SchemaError, match="newer"):
        migrate(connection, [])


def test_a_database_of_another_application_is_neither_read_nor_made_a_store(store_url: str):
    engine = sa.create_engine(resolve_url(store_url))
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE foo (x INTEGER)"))
    for create in (False, True):
        with pytest.raises(StoreError, match=r"not an mt-eval leaderboard store \(it has the tables foo\)"):
            open_store(store_url, create=create)
    with engine.connect() as connection:
        assert sa.inspect(connection).get_table_names() == ["foo"]
        if engine.dialect.name == "sqlite":
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() != "wal"
    engine.dispose()


def test_reading_an_empty_or_older_store_changes_nothing(store_url: str, monkeypatch):
    from mt_eval.leaderboard import migrations

    with pytest.raises(StoreError, match=r"no leaderboard store at .* yet: publish a card first"):
        open_store(store_url, create=False)
    if "://" not in store_url:
        assert not Path(store_url).exists()
    open_store(store_url).close()
    monkeypatch.setattr(migrations, "MIGRATIONS", (*MIGRATIONS, Migration(2, "next", lambda connection: None)))
    with pytest.raises(StoreError, match="schema version 1, older than this mt-eval reads: publishing a card"):
        open_store(store_url, create=False)
    with open_store(store_url) as store, store.reading() as connection:  # publishing upgrades it
        assert connection.execute(sa.text("SELECT max(version) FROM schema_version")).scalar() == 2


def test_an_unreachable_database_is_a_clear_error_and_nothing_is_created(tmp_path: Path, capsys, cards):
    from postgres_server import free_port

    url = f"postgresql://someone:secret@127.0.0.1:{free_port()}/board"
    with pytest.raises(StoreError) as raised:
        open_store(url)
    message = str(raised.value)
    assert "cannot open the leaderboard store" in message and "secret" not in message and "running" in message
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    from mt_eval.cli import main

    assert main(["publish", str(card), "--db", url, "--no-input"]) == 1
    assert "nothing was published" in capsys.readouterr().err
    assert main(["publish", str(card), "--db", str(tmp_path / "missing" / "board.db")]) == 1
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "missing").exists()
    with pytest.raises(StoreError, match="SQLite or PostgreSQL"):
        resolve_url("mysql://x@localhost/db")
    for malformed in ("postgresql://u@127.0.0.1:notaport/db", "postgresql://u@[::1/db"):  # (had been tracebacks)
        with pytest.raises(StoreError, match=r"is not a database URL: write sqlite:///PATH, postgresql://USER@HOST"):
            resolve_url(malformed)
    for other in ("postgresql+psycopg2://u@127.0.0.1/db", "postgresql+asyncpg://u@127.0.0.1/db"):  # (had said to
        with pytest.raises(StoreError, match=r"names a driver mt-eval does not use: write postgresql://"):  # install
            open_store(other, create=False)                                                               # psycopg)
    with pytest.raises(StoreError, match=r"an SQLite URL has no host: write three slashes before a relative path "
                                         r"\(sqlite:///host/x.db\)"):
        resolve_url("sqlite://host/x.db")


def test_a_store_under_a_file_says_the_file_is_not_a_directory(tmp_path: Path, capsys, cards):
    """Before, ``--db notes.txt/board.db`` said the directory notes.txt "does not exist", beside that very file."""
    from mt_eval.cli import main

    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a directory\n")
    for under in (notes / "board.db", notes / "deeper" / "board.db"):
        assert main(["publish", str(card), "--db", str(under), "--no-input"]) == 1
        said = capsys.readouterr().err
        assert f"cannot create the leaderboard store {under}: {notes} is a file, not a directory" in said, said
        assert "does not exist" not in said
        assert main(["leaderboard", "--db", str(under)]) == 1  # (had said to publish a card first)
        assert f"cannot open the leaderboard store {under}: {notes} is a file, not a directory" in \
            capsys.readouterr().err
    assert notes.read_text() == "not a directory\n"


def test_a_default_store_whose_directory_cannot_be_made_is_a_clear_error(tmp_path: Path, capsys, cards, monkeypatch):
    """Before: a data directory that cannot be made (HOME=/ for a user without a home, a read-only home) ended
    ``mt-eval publish`` in a traceback."""
    from mt_eval.cli import main

    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    monkeypatch.delenv("MT_EVAL_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/proc/mt-eval-no-such-directory")  # (no directory can be made in /proc)
    assert main(["publish", str(card), "--no-input"]) == 1
    said = capsys.readouterr().err
    assert ("mt-eval publish: cannot create the leaderboard store /proc/mt-eval-no-such-directory/mt-eval/"
            "leaderboard.db: cannot make its directory /proc/mt-eval-no-such-directory/mt-eval (No such file or "
            "directory); name a store in a directory this user can write with --db FILE or $MT_EVAL_DB, or set "
            "XDG_DATA_HOME; nothing was published") in said, said


def test_an_absolute_path_written_with_three_slashes_is_said_with_four(tmp_path: Path, capsys, cards, monkeypatch):
    """Before: ``--db sqlite:///tmp/x/board.db`` said only that the directory tmp/x (relative) does not exist, and
    the board that there is no store yet, beside the store at /tmp/x/board.db."""
    from mt_eval.cli import main

    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    monkeypatch.chdir(tmp_path / "run")  # (where tmp_path, made relative, names nothing)
    relative = str(tmp_path / "board.db").lstrip("/")
    assert main(["publish", str(card), "--db", f"sqlite:///{relative}", "--no-input"]) == 1
    assert (f"the directory {Path(relative).parent} does not exist; for the absolute path /{relative}, write four "
            f"slashes: sqlite:////{relative}") in capsys.readouterr().err
    assert main(["publish", str(card), "--db", f"sqlite:////{relative}", "--no-input"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", f"sqlite:///{relative}"]) == 1
    assert f"write four slashes: sqlite:////{relative}" in capsys.readouterr().err
    assert main(["publish", str(card), "--db", "sqlite:///nowhere/board.db", "--no-input"]) == 1  # (no /nowhere)
    assert "four slashes" not in capsys.readouterr().err


@pytest.mark.parametrize("db", ["sqlite:///", "sqlite://", "sqlite:///:memory:", "sqlite:///{}?mode=ro", "", " "])
def test_a_store_that_would_keep_nothing_or_ignore_part_of_its_url_is_refused(db: str, tmp_path: Path, capsys, cards,
                                                                               monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # an empty --db must not fall back to the default
    monkeypatch.chdir(tmp_path)  # (where a blank --db would have named a file)
    monkeypatch.delenv("MT_EVAL_DB", raising=False)
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    from mt_eval.cli import main

    assert main(["publish", str(card), "--db", db.format(tmp_path / "board.db"), "--no-input"]) == 1
    err = capsys.readouterr().err
    assert "nothing was published" in err and "published #" not in err
    assert ("is empty" if not db.strip() else "takes no query arguments" if "?" in db else "needs a file") in err
    assert not (tmp_path / "board.db").exists() and not (tmp_path / "data").exists()
    monkeypatch.setenv("MT_EVAL_DB", "sqlite://")
    with pytest.raises(StoreError, match=r"^\$MT_EVAL_DB=sqlite://: an SQLite store needs a file"):
        resolve_url(None)


def test_sqlite_store_runs_in_wal_mode_under_the_user_data_directory(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("MT_EVAL_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    url = resolve_url(None)
    assert Path(url.database or "") == tmp_path / "data" / "mt-eval" / "leaderboard.db"
    with open_store() as store, store.reading() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    monkeypatch.setenv("MT_EVAL_DB", str(tmp_path / "env.db"))
    assert resolve_url(None).database == str(tmp_path / "env.db")


def test_parallel_publishers_neither_corrupt_nor_lose_cards(store_url: str, cards, tmp_path: Path):
    shared = write_card(cards.card("shared"), tmp_path / "shared" / "card.json")
    workers = 4
    batches = []
    for worker in range(workers):
        own = [write_card(cards.card(f"method-{worker}-{i}", variant=i), tmp_path / f"w{worker}" / f"{i}.json")
               for i in range(5)]
        batches.append([str(p) for p in own] + [str(shared)])
    open_store(store_url).close()  # the schema exists; what races is publishing
    processes = [subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "publish", *batch, "--db", store_url,
                                   "--no-input", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for batch in batches]
    reports = []
    for process in processes:
        out, err = process.communicate(timeout=180)
        assert process.returncode in (0, 1), err
        reports += msgspec.json.decode(out)
    statuses = [r["status"] for r in reports if r["card"] == str(shared)]
    assert sorted(statuses) == ["duplicate"] * (workers - 1) + ["published"]
    assert [r["status"] for r in reports if r["card"] != str(shared)] == ["published"] * workers * 5
    with open_store(store_url) as store:
        assert store.count() == workers * 5 + 1
        assert len({r["key"] for r in store.rows()}) == workers * 5 + 1
        if store.url.get_backend_name() == "sqlite":
            with store.reading() as connection:
                assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


def test_connection_advice_is_given_only_when_the_server_could_not_be_reached():
    """Before, "permission denied for schema public" came with "is the server running and the URL's host, port,
    user and database right?"."""
    from mt_eval.leaderboard.store_engine import unreached_advice

    url = resolve_url("postgresql://u@127.0.0.1/db")

    def error(cause: BaseException, message: str = "cannot open the leaderboard store") -> StoreError:
        made = StoreError(message)
        made.__cause__ = cause
        return made

    unreachable = sa.exc.OperationalError("connect", {}, Exception("connection refused"))
    refused = sa.exc.ProgrammingError("CREATE", {}, Exception("permission denied for schema public"))
    assert "is the server running" in unreached_advice(url, error(unreachable))
    assert unreached_advice(url, error(refused)) == ""
    assert unreached_advice(url, error(unreachable, "another publisher has been writing it for over 60 s")) == ""


def test_a_connection_the_pool_cannot_reset_prints_no_traceback():
    """A Ctrl-C while a connection goes back to the pool had SQLAlchemy print "Exception during reset or similar"
    with a traceback among publish's messages (it logs it; nothing configured logging, so the last resort did)."""
    import subprocess
    import sys

    code = ("import logging\nimport mt_eval.leaderboard.store_engine\ntry:\n    raise KeyboardInterrupt\n"
            "except KeyboardInterrupt:\n    logging.getLogger('sqlalchemy.pool.impl.QueuePool').error("
            "'Exception during reset or similar', exc_info=True)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def test_a_publish_is_on_the_servers_disk_when_it_is_said_to_be_stored(postgres_cluster, cards, tmp_path: Path):
    """The tests' server runs with synchronous_commit off, as a server tuned for speed may: a crash (pg_ctl stop -m
    immediate) then lost the last batches of a publish that had been said to be stored."""
    with open_store(postgres_cluster.database()) as store:
        with store.reading() as connection:
            assert connection.exec_driver_sql("SHOW synchronous_commit").scalar() == "off"
        with store.writing() as connection:
            assert connection.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
        store.publish([record(cards, tmp_path, "alpha")], "2026-01-01T00:00:00+00:00")
        with store.reading() as connection:  # (for its own transaction only)
            assert connection.exec_driver_sql("SHOW synchronous_commit").scalar() == "off"
