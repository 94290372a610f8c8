"""A PostgreSQL store that cannot be used says why in plain words, with the fix, and never the password: the login
refused (a wrong or missing password, a user the server does not have), the server out of reach (connection
refused, an unknown host, no answer in time), a database that does not exist, a permission missing. The URL's own
connect_timeout and keepalive settings win over mt-eval's defaults."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from mt_eval.cli import main
from mt_eval.leaderboard import server_silence
from mt_eval.leaderboard.address import resolve_url
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.store_engine import CONNECT_TIMEOUT_S, KEEPALIVES, new_engine
from mt_eval.leaderboard.synthetic import write_card

COMMANDS = [["publish", "{card}", "--no-input"], ["leaderboard"], ["leaderboard", "serve", "--port", "0"]]
PASSWORD_FIX = "check the password in the URL (postgresql://USER:PASSWORD@HOST/DB, an @ in it written %40), or in " \
               "$PGPASSWORD or ~/.pgpass"


def refused(command: list[str], db: str, tmp_path: Path, cards, capsys) -> str:
    """What ``command`` run on the store ``db`` says on stderr; it exits 1."""
    card = write_card(cards.card("alpha"), tmp_path / "run" / "card.json")
    assert main([str(card) if word == "{card}" else word for word in command] + ["--db", db]) == 1
    return capsys.readouterr().err


def run_sql(cluster, *statements: str, database: str = "postgres") -> None:
    with psycopg.connect(f"host=127.0.0.1 port={cluster.port} user=mt_eval dbname={database}",
                         autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


@pytest.fixture(scope="module")
def logins(postgres_cluster):
    """The tests' server, where pw_board logs in with the password "right-secret" only, pw_ghost is asked for a
    password but does not exist, and pw_reader logs in without one."""
    hba = postgres_cluster.root / "data" / "pg_hba.conf"
    hba.write_text("host all pw_board 127.0.0.1/32 scram-sha-256\nhost all pw_ghost 127.0.0.1/32 scram-sha-256\n"
                   + hba.read_text())
    run_sql(postgres_cluster, "CREATE ROLE pw_board LOGIN PASSWORD 'right-secret'", "CREATE ROLE pw_reader LOGIN",
            "SELECT pg_reload_conf()")
    return postgres_cluster


@pytest.fixture
def no_password_around(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no.pgpass"))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_login_refused_says_authentication_failed_and_where_the_password_goes(
        command: list[str], logins, no_password_around, tmp_path: Path, cards, capsys, monkeypatch):
    """Before: libpq's "connection failed: connection to server at ... failed: FATAL: password authentication failed
    for user ...", then "is the server running and the URL's host, port, user and database right?"."""
    db = logins.database().rsplit("/", 1)[1]
    at = f"127.0.0.1:{logins.port}"
    for user, given in (("pw_board", "pw_board:wrong-secret"), ("pw_ghost", "pw_ghost:wrong-secret")):
        err = refused(command, f"postgresql://{given}@{at}/{db}", tmp_path, cards, capsys)
        assert f"authentication failed for user {user} on {at}: {PASSWORD_FIX}" in err, err
        assert "wrong-secret" not in err and "is the server running" not in err
    err = refused(command, f"postgresql://pw_board@{at}/{db}", tmp_path, cards, capsys)
    assert f"authentication failed for user pw_board on {at} (none was given): {PASSWORD_FIX}" in err, err
    if command == ["leaderboard"]:
        monkeypatch.setenv("PGPASSWORD", "right-secret")  # the fix said: the login is accepted
        err = refused(command, f"postgresql://pw_board@{at}/{db}", tmp_path, cards, capsys)
        assert "no leaderboard store at" in err, err


def test_a_user_the_server_does_not_have_is_named(postgres_cluster, tmp_path: Path, cards, capsys):
    at = f"127.0.0.1:{postgres_cluster.port}"
    for command in COMMANDS:
        err = refused(command, f"postgresql://nobody_here@{at}/postgres", tmp_path, cards, capsys)
        assert (f"authentication failed for user nobody_here on {at}: the server has no such user; check the user "
                "name in the URL (createuser nobody_here makes one)") in err, err


def test_a_database_that_does_not_exist_says_how_to_create_it(postgres_cluster, tmp_path: Path, cards, capsys):
    at, port = f"127.0.0.1:{postgres_cluster.port}", postgres_cluster.port
    db = f"postgresql://mt_eval@{at}/board_nothere"
    create = f"createdb -h 127.0.0.1 -p {port} -U mt_eval board_nothere"
    for command in COMMANDS:
        err = refused(command, db, tmp_path, cards, capsys)
        assert (f"the server {at} has no database board_nothere: create it ({create}), or correct the database in "
                "the URL") in err, err
    createdb = shutil.which("createdb") or str(postgres_cluster.bindir / "createdb")
    subprocess.run([createdb, *create.split()[1:]], check=True, timeout=60)
    assert "no leaderboard store at" in refused(["leaderboard"], db, tmp_path, cards, capsys)  # (it is there now)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port where connections are accepted (by the kernel) and never answered; its number."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def test_a_server_out_of_reach_says_so(silent_server: int, tmp_path: Path, cards, capsys):
    """A URL's own connect_timeout is waited for, not mt-eval's 10 s (it had overridden the URL's)."""
    from postgres_server import free_port

    port = free_port()
    for command in COMMANDS:
        err = refused(command, f"postgresql://board:secret@127.0.0.1:{port}/lb", tmp_path, cards, capsys)
        assert (f"the server 127.0.0.1:{port} cannot be reached: connection refused (is PostgreSQL running there, and "
                "the URL's host and port right?)") in err and "secret" not in err, err
    err = refused(["leaderboard"], "postgresql://board@no-such-host.invalid/lb", tmp_path, cards, capsys)
    assert ("the server no-such-host.invalid:5432 cannot be reached: the host no-such-host.invalid is unknown "
            "(check the URL's host)") in err, err
    started = time.monotonic()
    err = refused(["leaderboard"], f"postgresql://board@127.0.0.1:{silent_server}/lb?connect_timeout=2", tmp_path,
                  cards, capsys)
    assert time.monotonic() - started < 8
    assert f"the server 127.0.0.1:{silent_server} cannot be reached: no answer within 2 s (connection timed out" in err


def test_a_permission_missing_is_named_with_its_grant(logins, tmp_path: Path, cards, capsys):
    store = logins.database()
    name = store.rsplit("/", 1)[1]
    reader = f"postgresql://pw_reader@127.0.0.1:{logins.port}/{name}"
    run_sql(logins, "REVOKE CREATE ON SCHEMA public FROM PUBLIC", database=name)  # (PostgreSQL 15's default)
    err = refused(COMMANDS[0], reader, tmp_path, cards, capsys)
    assert ("user pw_reader has no permission on the schema public (permission denied): its owner can grant it "
            "(GRANT USAGE, CREATE ON SCHEMA public TO pw_reader: USAGE to read, CREATE for the first publish") in err
    assert "nothing was published" in err
    open_store(store).close()  # the store, made by its owner: pw_reader may not read its tables
    err = refused(["leaderboard"], reader, tmp_path, cards, capsys)
    assert ("user pw_reader has no permission on the table schema_version (permission denied): its owner can grant "
            "it (GRANT SELECT, INSERT ON TABLE schema_version TO pw_reader: SELECT to read, INSERT to publish)") in err
    run_sql(logins, f"REVOKE CONNECT ON DATABASE {name} FROM PUBLIC")
    err = refused(["leaderboard"], reader, tmp_path, cards, capsys)
    assert (f"user pw_reader may not connect to the database {name} on 127.0.0.1:{logins.port} (permission denied): "
            f"its owner can allow it (GRANT CONNECT ON DATABASE {name} TO pw_reader)") in err, err


def connection_parameters(url: str, monkeypatch) -> dict[str, object]:
    """What mt-eval gives the driver to connect to ``url`` (the connection itself is refused)."""
    given: list[dict[str, object]] = []

    class Refused:
        @staticmethod
        def connect(*args: object, **kwargs: object) -> None:
            given.append(kwargs)
            raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(server_silence, "connection_class", lambda: Refused)
    engine = new_engine(resolve_url(url))
    with pytest.raises(sa.exc.OperationalError), engine.connect():
        pass
    engine.dispose()
    return given[0]


def test_the_urls_own_connection_settings_win_over_the_defaults(monkeypatch):
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    defaults = connection_parameters("postgresql://u@127.0.0.1/db", monkeypatch)
    assert {key: defaults[key] for key in ("connect_timeout", *KEEPALIVES)} == {"connect_timeout": 10, **KEEPALIVES}
    own = connection_parameters("postgresql://u@127.0.0.1/db?connect_timeout=3&keepalives_idle=5&keepalives=0",
                                monkeypatch)
    assert (own["connect_timeout"], own["keepalives_idle"], own["keepalives"]) == ("3", "5", "0")
    assert own["keepalives_count"] == KEEPALIVES["keepalives_count"]  # (a default the URL does not give stays)
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "4")  # libpq's own: read by the driver, when the URL gives none
    assert "connect_timeout" not in connection_parameters("postgresql://u@127.0.0.1/db", monkeypatch)


def test_a_connection_is_made_with_the_urls_own_settings(postgres_cluster):
    with open_store(postgres_cluster.database() + "?connect_timeout=3&keepalives_idle=7") as store, \
            store.reading() as connection:
        assert connection.connection.dbapi_connection is not None
        used = connection.connection.dbapi_connection.info.get_parameters()
    assert (used["connect_timeout"], used["keepalives_idle"], used["keepalives_count"]) == ("3", "7", "3")


@pytest.mark.parametrize("command", ["publish", "leaderboard"])
def test_help_says_the_urls_own_settings_win_over_the_defaults_and_a_refused_connection_says_why(command: str,
                                                                                                  capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert exited.value.code == 0
    assert (f"The URL's own libpq settings win over mt-eval's defaults (connect_timeout {CONNECT_TIMEOUT_S} s, TCP "
            "keepalives): postgresql://USER@HOST/DB?connect_timeout=3 waits 3 s; without one in the URL, "
            "$PGCONNECT_TIMEOUT does.") in shown
    assert "refuses the connection is said with why" in shown and "never the password" in shown
