"""A leaderboard store's SQLAlchemy engine, and the checkpoint that ends a publish into an SQLite store.

SQLite runs in WAL mode: a publish appends to ``STORE-wal`` and readers never wait for it. The log is copied into
the database when the last connection closes — but not while a reader (``leaderboard serve``) keeps one open,
and not at all by a connection whose file was moved or replaced meanwhile. A log left over like that would be
read as part of whatever file next takes the store's name (a store rebuilt elsewhere and moved over it): pages
of the old store inside the new one. So a publisher copies the log in and empties it before it lets go
(`checkpoint`), and between publishes the log holds nothing.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa

from mt_eval.leaderboard import StoreError

BUSY_TIMEOUT_S = 60
# How long each attempt at an SQLite store's write lock waits inside SQLite, which sees no Ctrl-C: a publisher
# waiting for another's lock tries again and again until `BUSY_TIMEOUT_S`, and Ctrl-C stops it between tries.
LOCK_ATTEMPT_MS = 50
# A connection the pool cannot reset (a Ctrl-C that came while it was being returned) is discarded; SQLAlchemy
# would also print its traceback through logging's last resort, in the middle of mt-eval's own messages.
logging.getLogger("sqlalchemy.pool").addHandler(logging.NullHandler())
# The write-ahead log is copied into the database (and synced) once it holds this many pages: SQLite's
# default of 1,000 (4 MiB) would do it on nearly every commit of a bulk publish, whose rows hold whole cards.
WAL_CHECKPOINT_PAGES = 16_384
# How long the checkpoint at the end of a publish waits for readers in the middle of a read (a page being
# rendered); one still reading then leaves the rest of the log for the next publish or the last connection.
CHECKPOINT_WAIT_MS = 5_000
# A PostgreSQL server that is gone (a host down, a network cut) is found by TCP within about a minute, rather than
# after the kernel's quarter of an hour of retries; one that is frozen is found by `server_silence`.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3,
              "tcp_user_timeout": 60_000}


def new_engine(url: sa.URL, *, writable: bool = False) -> sa.Engine:
    """An engine; a ``writable`` one puts an SQLite database in WAL mode, which stays with the file."""
    if url.get_backend_name() == "postgresql":
        try:
            engine = sa.create_engine(url, connect_args={"connect_timeout": 10, **KEEPALIVES})
        except ModuleNotFoundError as exc:
            if url.drivername != "postgresql+psycopg":  # (postgresql+psycopg2://, +asyncpg://: another driver named)
                raise StoreError(f"{url.drivername}:// names a driver mt-eval does not use: write postgresql://... "
                                 "(mt-eval connects with psycopg 3)") from exc
            raise StoreError(f"the PostgreSQL driver is not installed ({exc.name}): pip install 'psycopg[binary]'") \
                from exc

        @sa.event.listens_for(engine, "do_connect")
        def connect(_dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
            from mt_eval.leaderboard.server_silence import connection_class

            return connection_class().connect(*cargs, **cparams)  # (a server that stops answering is given up on)

        return engine
    file = url.database or ""
    if not writable and file and on_read_only_file_system(file):
        engine = sa.create_engine("sqlite://", creator=lambda: _immutable(file))
    else:
        engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_S})

    @sa.event.listens_for(engine, "connect")
    def configure(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, not by the driver
        cursor = dbapi_connection.cursor()
        if writable:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def begin(connection: sa.Connection) -> None:
        if connection.get_execution_options().get("mt_eval_write"):
            _begin_writing(connection)
        else:
            connection.exec_driver_sql("BEGIN")

    return engine


def _begin_writing(connection: sa.Connection) -> None:
    """``BEGIN IMMEDIATE``: the write lock, waited for at most `BUSY_TIMEOUT_S` in attempts of `LOCK_ATTEMPT_MS`
    (one wait of a minute in SQLite had held a publisher through Ctrl-C, pressed twice, until the other let go)."""
    raw = connection.connection.dbapi_connection
    assert raw is not None
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    raw.execute(f"PRAGMA busy_timeout={LOCK_ATTEMPT_MS}")
    try:
        while time.monotonic() < deadline:
            try:
                raw.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", sqlite3.SQLITE_BUSY) != sqlite3.SQLITE_BUSY:
                    break  # (not another writer's lock: said as any store error is, below)
        connection.exec_driver_sql("BEGIN IMMEDIATE")  # the last attempt, which fails as every store error does
    finally:
        raw.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")


def on_read_only_file_system(file: str | Path) -> bool:
    """Whether the directory of the store's ``file`` is on a file system mounted read-only."""
    try:
        return bool(os.statvfs(os.path.dirname(os.path.abspath(file))).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # (no statvfs on Windows)
        return False


def _immutable(file: str) -> sqlite3.Connection:
    """A store on a read-only file system (a CD, a read-only mount), opened as immutable: SQLite cannot make its
    ``-shm`` file beside it, which WAL mode needs to read otherwise, and nothing there can change it."""
    return sqlite3.connect(f"file:{quote(os.path.abspath(file))}?mode=ro&immutable=1", uri=True,
                           check_same_thread=False)


def checkpoint(engine: sa.Engine) -> None:
    """Copy an SQLite store's write-ahead log into the database and empty it (``wal_checkpoint(TRUNCATE)``),
    waiting at most `CHECKPOINT_WAIT_MS` for readers. A checkpoint that cannot be done now changes nothing."""
    if engine.dialect.name != "sqlite":
        return
    with suppress(sa.exc.DBAPIError, sqlite3.Error):  # (a connection that cannot be made: raised unwrapped)
        raw = engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute(f"PRAGMA busy_timeout={CHECKPOINT_WAIT_MS}")
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cursor.close()
        finally:
            raw.close()
