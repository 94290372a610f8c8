"""A leaderboard store's SQLAlchemy engine, the checkpoint that ends a publish into an SQLite store, and what a
store's error means (`failure_reason`: for PostgreSQL, a refused login, a server out of reach, a missing database or
a missing permission said in plain words, with the fix).

SQLite runs in WAL mode: a publish appends to ``STORE-wal`` and readers never wait for it. The log is copied into
the database when the last connection closes — but not while a reader (``leaderboard serve``) keeps one open,
and not at all by a connection whose file was moved or replaced meanwhile. A log left over like that would be
read as part of whatever file next takes the store's name (a store rebuilt elsewhere and moved over it): pages
of the old store inside the new one. So a publisher copies the log in and empties it before it lets go
(`checkpoint`), and between publishes the log holds nothing.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import shlex
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
CONNECT_TIMEOUT_S = 10  # how long connecting to a PostgreSQL server may take (libpq's connect_timeout)


def connect_args(url: sa.URL) -> dict[str, Any]:
    """The libpq parameters mt-eval adds to a PostgreSQL URL (`CONNECT_TIMEOUT_S`, `KEEPALIVES`): each only where
    the URL's query does not give its own (``?connect_timeout=3``), nor, for the timeout, ``$PGCONNECT_TIMEOUT``."""
    given = set(url.query) | ({"connect_timeout"} if os.environ.get("PGCONNECT_TIMEOUT") else set())
    defaults = {"connect_timeout": CONNECT_TIMEOUT_S, **KEEPALIVES}
    return {name: value for name, value in defaults.items() if name not in given}


def new_engine(url: sa.URL, *, writable: bool = False) -> sa.Engine:
    """An engine; a ``writable`` one puts an SQLite database in WAL mode, which stays with the file."""
    if url.get_backend_name() == "postgresql":
        try:
            engine = sa.create_engine(url, connect_args=connect_args(url), pool_pre_ping=True)  # (a connection the
            # server dropped while it idled in the pool — a restart, idle_session_timeout — is replaced, not a failure)
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

        @sa.event.listens_for(engine, "handle_error")
        def silence_is_said(context: sa.engine.ExceptionContext) -> None:
            from mt_eval.leaderboard.server_silence import connection_class

            if context.is_pre_ping and isinstance(context.original_exception, connection_class().ServerSilent):
                context.is_disconnect = False  # (a server frozen at the pre-ping fails as it does at a query)

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


def failure_reason(url: sa.URL, exc: sa.exc.DBAPIError) -> str:
    """Why a statement or a connection of the store at ``url`` failed, in a line, with what to do where it is known."""
    said = connection_failure(url, exc.orig) if url.get_backend_name() == "postgresql" else None
    if said is not None:
        return said
    text = str(exc.orig).strip().splitlines()
    first = text[0] if text else type(exc.orig).__name__
    if first in ("database is locked", "canceling statement due to lock timeout"):  # (SQLite's, PostgreSQL's)
        return (f"another publisher has been writing it for over {BUSY_TIMEOUT_S:g} s ({first}); run this again "
                "when that one is done, or stop it")
    if first == "database disk image is malformed" and url.database:
        return (f"{first}; the file is damaged (cut short or overwritten): restore it from a backup, or recover what "
                f"it holds into a new file: sqlite3 {shlex.quote(url.database)} .recover | sqlite3 NEW.db")
    return first + ("; it is no SQLite file, so no leaderboard store: give --db the store's file (a new name makes a "
                    "new store), or a postgresql:// URL" if first == "file is not a database" else "")


# What to grant on what a PostgreSQL server says "permission denied for KIND NAME" of, and what each is for
PRIVILEGES = {"schema": ("USAGE, CREATE", "USAGE to read, CREATE for the first publish, which makes the tables"),
              "table": ("SELECT, INSERT", "SELECT to read, INSERT to publish"),
              "sequence": ("USAGE", "publishing numbers the rows with it")}


def connection_failure(url: sa.URL, error: BaseException | None) -> str | None:
    """What a PostgreSQL ``error`` means when it is one a user fixes (the login refused, the server out of reach,
    no such database, a permission missing), in plain words with the fix; None for any other. It never holds
    the password."""
    text = str(error)
    host, port = _server(url, text)
    server = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    user = _found(r'for user "([^"]*)"', text) or url.username or os.environ.get("PGUSER") or _login_name()
    if re.search(r"password authentication failed|no password supplied", text):
        none = " (none was given)" if "no password supplied" in text else ""
        return (f"authentication failed for user {user} on {server}{none}: check the password in the URL "
                "(postgresql://USER:PASSWORD@HOST/DB, an @ in it written %40), or in $PGPASSWORD or ~/.pgpass")
    if role := _found(r'role "([^"]*)" does not exist', text):
        return (f"authentication failed for user {role} on {server}: the server has no such user; check the user "
                f"name in the URL (createuser {role} makes one)")
    if method := _found(r"(\w+) authentication failed for user", text):
        return (f"authentication failed for user {user} on {server} ({method} authentication): check the user name "
                "in the URL, and that the server's pg_hba.conf lets it log in so")
    if database := _found(r'database "([^"]*)" does not exist', text):
        return (f"the server {server} has no database {database}: create it (createdb -h {host} -p {port} -U {user} "
                f"{database}), or correct the database in the URL")
    if database := _found(r'permission denied for database "([^"]*)"', text):
        return (f"user {user} may not connect to the database {database} on {server} (permission denied): its owner "
                f"can allow it (GRANT CONNECT ON DATABASE {database} TO {user})")
    if denied := re.search(r"permission denied for (schema|table|sequence) (\S+)", text):
        kind, name = denied.groups()
        granted, why = PRIVILEGES[kind]
        return (f"user {user} has no permission on the {kind} {name} (permission denied): its owner can grant it "
                f"(GRANT {granted} ON {kind.upper()} {name} TO {user}: {why})")
    return _unreachable(url, text, server)


def unreached_advice(url: sa.URL, error: StoreError) -> str:
    """What to check when a PostgreSQL store cannot be reached for a reason not said already (not when the server
    refused what it was asked: a permission, say, or another publisher's lock)."""
    cause = error.__cause__
    reached = (not isinstance(cause, sa.exc.OperationalError) or "another publisher" in str(error)
               or connection_failure(url, cause.orig) is not None)
    if url.get_backend_name() == "postgresql" and not reached:
        return " (is the server running and the URL's host, port, user and database right?)"
    return ""


def _unreachable(url: sa.URL, text: str, server: str) -> str | None:
    """What a connection that found no server says, or None."""
    why = None
    if "Connection refused" in text:
        why = "connection refused (is PostgreSQL running there, and the URL's host and port right?)"
    elif re.search(r"failed to resolve host|could not translate host name", text):
        why = f"the host {url.host} is unknown (check the URL's host)"
    elif "timeout expired" in text:
        seconds = url.query.get("connect_timeout") or os.environ.get("PGCONNECT_TIMEOUT") or CONNECT_TIMEOUT_S
        why = (f"no answer within {seconds} s (connection timed out: is the host up, and no firewall dropping the "
               "connection? on a slow network give the URL ?connect_timeout=SECONDS)")
    elif found := re.search(r"No route to host|Network is unreachable", text):
        why = f"{found.group().lower()} (check the URL's host, and the network)"
    elif re.search(r'on socket "[^"]*" failed: No such file or directory', text):
        why = ("no server listens on that socket (is PostgreSQL running on this machine? give the URL the host of "
               "a server elsewhere)")
    return f"the server {server} cannot be reached: {why}" if why else None


def _server(url: sa.URL, text: str) -> tuple[str, str]:
    """The host (or socket directory) and port a connection went to: as the error says, else as the URL does."""
    if at := re.search(r'server at "([^"]*)"(?: \([^)]*\))?, port (\d+)', text):
        return at.group(1), at.group(2)
    if local := re.search(r'on socket "(.*)/\.s\.PGSQL\.(\d+)"', text):
        return local.group(1), local.group(2)
    return url.host or "localhost", str(url.port or os.environ.get("PGPORT") or 5432)


def _login_name() -> str:
    """The user libpq logs in as when neither the URL nor $PGUSER names one."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # (no name for this process's user id)
        return "(this system user)"


def _found(pattern: str, text: str) -> str | None:
    match = re.search(pattern, text)
    return match.group(1) if match else None
