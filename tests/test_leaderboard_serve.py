"""`mt-eval leaderboard serve`: the pages rendered from the live store on loopback; HEAD served, other methods
refused; a client that hangs up is nobody's error; a store that cannot be read, or holds a damaged row, is said
to be; Ctrl-C exits 130."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card


def publish(db: str, tmp_path: Path, *cards: dict) -> None:
    paths = [str(write_card(card, tmp_path / "cards" / f"{card['method']['method_id']}.json")) for card in cards]
    assert main(["publish", *paths, "--db", db, "--no-input"]) == 0


@dataclass
class Served:
    base: str  # http://127.0.0.1:PORT/
    process: subprocess.Popen[str]
    stderr: str = ""  # once it has stopped

    def stopped(self, by: str) -> str:
        """The line it says when ``by`` (Ctrl-C, SIGTERM) stops it: which server it was."""
        return f"mt-eval leaderboard serve: stopped serving {self.base} ({by})"


@contextmanager
def served(db: str) -> Iterator[Served]:
    """`leaderboard serve` on a free port, stopped at the end (unless it stopped already)."""
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "leaderboard", "serve", "--db", db, "--port",
                                "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line + (process.stderr.read() if process.stderr else "")
        server = Served(url.group(0), process)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
        err = process.communicate(timeout=10)[1]
    server.stderr = err


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()  # type: ignore[no-any-return]


def failing(url: str) -> tuple[int, str]:
    with pytest.raises(urllib.error.HTTPError) as raised:
        fetch(url)
    with raised.value:
        return raised.value.code, raised.value.read().decode()


def test_serve_renders_the_live_store_on_loopback(cards, tmp_path: Path):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        base = server.base
        assert "Alpha" in fetch(base).decode()
        board = json.loads(fetch(base + "leaderboard.json"))
        key = board["groups"][0]["rows"][0]["key"]
        assert "← leaderboard" in fetch(f"{base}cards/{key}.html").decode()
        publish(db, tmp_path / "later", cards.card("beta", quality=0.3))
        assert "Beta" in fetch(base).decode()  # live, not a snapshot
        assert failing(base + "cards/ffffffffffffffff.html")[0] == 404


def test_a_damaged_card_is_a_500_and_one_warning_not_a_missing_page(cards, tmp_path: Path):
    import sqlalchemy as sa

    from mt_eval.leaderboard.store import open_store

    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8), cards.card("beta", quality=0.3))
    with open_store(db) as store, store.writing() as connection:
        connection.execute(sa.text("UPDATE cards SET card_json = '{not json' WHERE id = 1"))
    with served(db) as server:
        base = server.base
        [key] = [r["key"] for g in json.loads(fetch(base + "leaderboard.json"))["groups"] for r in g["rows"]
                 if r["method_id"] == "alpha"]
        for _ in range(2):
            assert failing(f"{base}cards/{key}.html") == (500, "this run card cannot be read from the store")
    assert server.stderr.count("warning: shown without its card's details: row #1 (run ") == 1, server.stderr
    assert "Traceback" not in server.stderr


def request(base: str, method: str, path: str = "/") -> tuple[int, dict[str, str], bytes]:
    host, port = base.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_head_is_get_without_the_body_and_other_methods_are_not_allowed(cards, tmp_path: Path):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        status, got, page = request(server.base, "GET")
        assert status == 200 and page
        status, headers, body = request(server.base, "HEAD")
        assert (status, body, headers["Content-Length"], headers["Content-Type"]) == (
            200, b"", got["Content-Length"], got["Content-Type"])
        assert request(server.base, "HEAD", "/nothing")[::2] == (404, b"")
        for method in ("POST", "PUT", "DELETE", "OPTIONS", "PROPFIND", "FOO", "get"):  # (the last three had been 501)
            status, headers, body = request(server.base, method)
            assert (status, headers["Allow"]) == (405, "GET, HEAD"), method
            assert body.decode() == f"{method} is not allowed: this server only reads (GET, HEAD)"
    assert server.stderr == server.stopped("SIGTERM") + "\n"  # (the fixture stops it so)


def test_a_client_that_hangs_up_is_quiet(cards, tmp_path: Path):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        host, port = server.base.removeprefix("http://").rstrip("/").split(":")
        for sent in [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"] * 5 + [b"GET / HT"]:  # then reset: no answer wanted
            with socket.create_connection((host, int(port))) as client:
                client.sendall(sent)
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        assert "Alpha" in fetch(server.base).decode()
    assert server.stderr == server.stopped("SIGTERM") + "\n"  # (the fixture stops it so)


def test_ctrl_c_stops_it_with_exit_status_130(cards, tmp_path: Path):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        assert "Alpha" in fetch(server.base).decode()
        server.process.send_signal(signal.SIGINT)
        server.process.wait(timeout=10)
    assert server.process.returncode == 130
    assert server.stderr == server.stopped("Ctrl-C") + "\n"


UNAVAILABLE = "the leaderboard is unavailable right now; try again later"
CANNOT_READ = "mt-eval leaderboard serve: the store cannot be read (pages are answered 503 until it can): "


def test_a_store_that_cannot_be_read_is_a_503_that_names_nothing_and_is_logged_once(cards, tmp_path: Path):
    """Before, the 503 said why ("the leaderboard store cannot be read: cannot read the leaderboard store PATH: ..."):
    to a public page, the store's path, or its database, user, host and port. The reason goes to stderr, once."""
    import sqlite3

    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        with sqlite3.connect(db) as connection:
            connection.execute("DROP TABLE cards")
        for page in ("", "leaderboard.json", "", ""):
            assert failing(server.base + page) == (503, UNAVAILABLE)
    assert server.stderr.splitlines() == [f"{CANNOT_READ}cannot read the leaderboard store {db}: no such table: cards",
                                          server.stopped("SIGTERM")]


def test_an_outage_whose_reason_keeps_changing_logs_at_most_a_hundred_reasons(capsys):
    """A reason whose text changes on each failure (a count, a time in it) was logged on every request, and each
    kept in memory until the store could be read again, however long the outage."""
    from mt_eval.leaderboard import StoreError
    from mt_eval.leaderboard.serve import StoreOutage

    outage = StoreOutage()
    for attempt in range(250):
        outage.failed(StoreError(f"connection refused (attempt {attempt})"))
        outage.failed(StoreError("connection refused (attempt 0)"))
    lines = capsys.readouterr().err.splitlines()
    assert lines[:100] == [f"{CANNOT_READ}connection refused (attempt {n})" for n in range(100)]
    assert lines[100:] == ["mt-eval leaderboard serve: the store still cannot be read, for reasons other than the "
                           "100 above: they are not shown until it can be read again"]
    outage.read()
    outage.failed(StoreError("connection refused (attempt 250)"))
    assert capsys.readouterr().err.splitlines() == ["mt-eval leaderboard serve: the store can be read again",
                                                    f"{CANNOT_READ}connection refused (attempt 250)"]


def as_administrator(postgres_cluster, sql: str, *arguments: object) -> list[tuple[object, ...]]:
    """The rows of ``sql`` run on the cluster's maintenance database, outside any database the board reads."""
    import psycopg

    with psycopg.connect(f"host=127.0.0.1 port={postgres_cluster.port} user=mt_eval dbname=postgres",
                         autocommit=True) as connection:
        cursor = connection.execute(sql, arguments or None)
        return cursor.fetchall() if cursor.description else []


def test_a_postgresql_store_that_cannot_be_read_names_nothing_of_its_server(postgres_cluster, cards, tmp_path: Path):
    url = postgres_cluster.database()
    name = url.rsplit("/", 1)[1]
    publish(url, tmp_path, cards.card("alpha", quality=0.8))
    with served(url) as server:
        assert "Alpha" in fetch(server.base).decode()
        as_administrator(postgres_cluster, f"DROP DATABASE {name} WITH (FORCE)")
        for _ in range(5):
            assert failing(server.base) == (503, UNAVAILABLE)
    logged = [line for line in server.stderr.splitlines() if line.startswith(CANNOT_READ)]
    assert len(logged) == len(set(logged)) <= 2, server.stderr  # (the connection cut, then the database gone)
    assert f"has no database {name}: create it" in logged[-1]


def test_a_postgresql_server_that_dropped_its_connections_is_read_again_at_once(postgres_cluster, cards,
                                                                                   tmp_path: Path):
    """Before: a server restarted (or one ending idle sessions) while the board idled answered the next page with a
    503, and logged an outage, though the server was up again: the pooled connection it had dropped was used."""
    url = postgres_cluster.database()
    name = url.rsplit("/", 1)[1]
    publish(url, tmp_path, cards.card("alpha", quality=0.8))
    with served(url) as server:
        assert "Alpha" in fetch(server.base).decode()
        # (what a restart does to the board's connection)
        assert as_administrator(postgres_cluster, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                                "datname = %s", name)
        assert "Alpha" in fetch(server.base).decode()
    assert CANNOT_READ not in server.stderr, server.stderr


def alpha_and_a_rebuilt_gamma(cards, tmp_path: Path) -> tuple[Path, Path]:
    """A store holding alpha's card, and one rebuilt elsewhere holding gamma's, to be moved over it."""
    db, rebuilt = tmp_path / "board.db", tmp_path / "rebuilt.db"
    publish(str(db), tmp_path, cards.card("alpha", quality=0.8))
    publish(str(rebuilt), tmp_path / "rebuilt", cards.card("gamma", quality=0.6))
    return db, rebuilt


def test_a_store_file_replaced_while_serving_is_read_from_its_new_file(cards, tmp_path: Path):
    """A store rebuilt elsewhere and moved over the one served (an atomic update) is what is served next; a
    store file that is gone is a 503, not an empty store made in its place, logged once until the store is back."""
    db, rebuilt = alpha_and_a_rebuilt_gamma(cards, tmp_path)
    spare = tmp_path / "spare.db"
    shutil.copyfile(rebuilt, spare)
    with served(str(db)) as server:
        assert "Alpha" in fetch(server.base).decode()
        rebuilt.replace(db)
        page = fetch(server.base).decode()
        assert "Gamma" in page and "Alpha" not in page
        db.unlink()
        assert failing(server.base) == failing(server.base) == (503, UNAVAILABLE)
        assert not db.exists()
        spare.replace(db)
        assert "Gamma" in fetch(server.base).decode()
        db.unlink()
        assert failing(server.base) == (503, UNAVAILABLE)
    gone = f"{CANNOT_READ}the leaderboard store {db} is gone (its file was moved or deleted)"
    assert server.stderr.splitlines() == [gone, "mt-eval leaderboard serve: the store can be read again", gone,
                                          server.stopped("SIGTERM")]


def test_a_store_moved_over_one_published_into_while_serving_is_read_whole(cards, tmp_path: Path, capsys):
    """A publish made while the store is served leaves no write-ahead log behind: the store moved over it next is
    read as it is, not with the old store's pages (damaged rows), and nothing of it is lost when serving stops."""
    db, rebuilt = alpha_and_a_rebuilt_gamma(cards, tmp_path)
    with served(str(db)) as server:
        assert "Alpha" in fetch(server.base).decode()
        publish(str(db), tmp_path, cards.card("beta", quality=0.7))  # while the server holds the store open
        assert "Beta" in fetch(server.base).decode()
        rebuilt.replace(db)
        board = json.loads(fetch(server.base + "leaderboard.json"))
        assert [row["method_id"] for group in board["groups"] for row in group["rows"]] == ["gamma"]
    assert "damaged" not in server.stderr
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [row["method_id"] for group in json.loads(out)["groups"] for row in group["rows"]] == ["gamma"]
    assert err == ""


def test_a_store_of_a_newer_schema_moved_over_the_one_served_is_refused_not_read(cards, tmp_path: Path):
    """A store that `open_store` would refuse (a newer mt-eval's) moved over the one served is a 503 with the reason
    on stderr, as it would be at the start, until a store this mt-eval reads is moved there. Before: served as if it
    were of this mt-eval's schema."""
    import sqlite3

    db, rebuilt = alpha_and_a_rebuilt_gamma(cards, tmp_path)
    newer = tmp_path / "newer.db"
    shutil.copyfile(rebuilt, newer)
    with sqlite3.connect(newer) as connection:
        connection.execute("INSERT INTO schema_version (version, description, applied_at) VALUES (99, 'x', 'y')")
    connection.close()
    with served(str(db)) as server:
        assert "Alpha" in fetch(server.base).decode()
        newer.replace(db)
        assert failing(server.base) == failing(server.base) == (503, UNAVAILABLE)
        rebuilt.replace(db)
        assert "Gamma" in fetch(server.base).decode()
    refused = (f"{CANNOT_READ}the leaderboard store {db} was replaced by one it cannot read: the store's schema is "
               "version 99, newer than this mt-eval knows")
    lines = server.stderr.splitlines()
    assert lines[0].startswith(refused) and lines[1] == "mt-eval leaderboard serve: the store can be read again", lines
