"""The store's schema, built by numbered migrations recorded in the ``schema_version`` table.

Opening a store to publish applies every migration it has not yet had, in order, each recorded with its version,
description and time. All pending migrations run in one transaction (DDL is transactional in both SQLite
and PostgreSQL), so a failure leaves the store as it was. Concurrent openers are serialised: SQLite by the
write lock (``BEGIN IMMEDIATE``), PostgreSQL by a transaction-scoped advisory lock. A store written by a
newer mt-eval (a version above the last one known here) is refused rather than misread, and so is a database
with other tables and no ``schema_version`` of ours (none, or another application's of that name): it is not made
a store. A store whose ``schema_version`` has lost its rows beside its ``cards`` is damaged: its version is not
guessed, nor recorded again. One whose ``schema_version`` (and nothing else) is left, its migrations recorded but
the ``cards`` they made gone (dropped by hand), is incomplete: reading it says so, publishing makes the tables again.

A migration is a function of a connection. Each one carries its own DDL: never edit a released migration,
add the next one.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

ADVISORY_LOCK = 0x6D745F6576616C  # "mt_eval": serialises migrations and publishers on PostgreSQL


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    apply: Callable[[sa.Connection], None]


class SchemaError(Exception):
    """The store's schema cannot be used by this mt-eval."""


class IncompleteStore(SchemaError):
    """A store of ours whose ``schema_version`` is all that is left of it: its migrations are recorded, but the
    ``cards`` table they made is gone (each migration commits with its record, so it was dropped since). It held
    no card any more: `migrate` makes its tables again, empty, without recording their migrations twice."""

    def __init__(self, version: int) -> None:
        super().__init__(f"an mt-eval leaderboard store left incomplete: its schema_version records version {version},"
                         " but its cards table is missing (dropped?), so it holds no card: publishing a card makes the "
                         "table again, empty (restore the store from a backup first to keep the cards it held)")
        self.version = version


# The longest text of a card's columns a store holds (PostgreSQL enforces them; a card past one is refused
# before it is stored, on either backend, by `mt_eval.leaderboard.publish.complete`).
TEXT_LIMITS = {"run_id": 200, "method_id": 200, "pair": 64, "corpus_name": 400, "finished_at": 40}


def _create_cards(connection: sa.Connection) -> None:
    metadata = sa.MetaData()
    cards = sa.Table(
        "cards", metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("content_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("run_id", sa.String(TEXT_LIMITS["run_id"]), nullable=False, unique=True),
        sa.Column("published_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(TEXT_LIMITS["finished_at"]), nullable=False),
        sa.Column("method_id", sa.String(TEXT_LIMITS["method_id"]), nullable=False),
        sa.Column("method_class", sa.String(40), nullable=False),
        sa.Column("dependency_class", sa.String(8)),
        sa.Column("pair", sa.String(TEXT_LIMITS["pair"]), nullable=False),
        sa.Column("corpus_name", sa.String(TEXT_LIMITS["corpus_name"]), nullable=False),
        sa.Column("corpus_sha256", sa.String(64), nullable=False),
        sa.Column("ranking_key", sa.String(64), nullable=False),
        sa.Column("headline_score", sa.Float),
        sa.Column("row_json", sa.Text, nullable=False),
        sa.Column("card_json", sa.Text, nullable=False),
    )
    sa.Index("cards_ranking_key", cards.c.ranking_key)
    sa.Index("cards_method", cards.c.method_id)
    sa.Index("cards_pair", cards.c.pair)
    metadata.create_all(connection)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "published run cards: identity, ranking columns, the row shown and the card itself", _create_cards),
)

_VERSIONS = sa.MetaData()
schema_version = sa.Table(
    "schema_version", _VERSIONS,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String(400), nullable=False),
    sa.Column("applied_at", sa.String(40), nullable=False),
)


def lock(connection: sa.Connection) -> None:
    """Serialise writers on PostgreSQL for the rest of the transaction (SQLite's write lock already does). A writer
    waits for another as long as SQLite's does (`store_engine.BUSY_TIMEOUT_S`), then gives up: one stopped with
    Ctrl-Z, or cut off mid-transaction, does not keep it waiting for ever. Its commit returns once it is on the
    server's disk, whatever the server's ``synchronous_commit``: a server set to ``off`` had lost the last batches
    of a publish in a crash after they were said to be stored."""
    if connection.dialect.name == "postgresql":
        from mt_eval.leaderboard import store_engine

        connection.execute(sa.text(f"SET LOCAL lock_timeout = '{int(store_engine.BUSY_TIMEOUT_S * 1000)}ms'"))
        connection.execute(sa.text("SET LOCAL synchronous_commit = on"))
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK})


def current_version(connection: sa.Connection) -> int:
    """The store's schema version: 0 for an empty database; `SchemaError` for a database with other tables
    and no ``schema_version`` of ours (another application's, which may well have a ``schema_version`` of its
    own, as Flyway's: it is not made a store)."""
    inspector = sa.inspect(connection)
    tables = inspector.get_table_names()
    if "schema_version" not in tables:
        if tables:
            raise _not_a_store(connection, tables)
        return 0
    columns = {column["name"]: column["type"] for column in inspector.get_columns("schema_version")}
    if not {c.name for c in schema_version.columns} <= set(columns) or not isinstance(columns["version"], sa.Integer):
        raise _not_a_store(connection, tables)
    version = int(connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0)
    if version == 0 and set(tables) - {"schema_version"}:  # tables, but no version recorded: not made a store here
        raise _version_lost(connection) if "cards" in tables else _not_a_store(connection, tables)
    if 0 < version <= max(m.version for m in MIGRATIONS) and "cards" not in tables:  # (each version known has them)
        raise IncompleteStore(version) if tables == ["schema_version"] and _records_ours(connection, version) \
            else _not_a_store(connection, tables)
    return version


def _records_ours(connection: sa.Connection, version: int) -> bool:
    """Whether ``schema_version`` records this mt-eval's migrations 1 to ``version``, as `migrate` writes them."""
    recorded = {tuple(row) for row in connection.execute(sa.select(schema_version.c.version,
                                                                   schema_version.c.description))}
    return recorded == {(m.version, m.description) for m in MIGRATIONS if m.version <= version}


def _not_a_store(connection: sa.Connection, tables: list[str]) -> SchemaError:
    shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
    fix = "give the store's path, or publish into a new file" if connection.dialect.name == "sqlite" else \
        "give the store's database in the URL, or publish into a new one (CREATE DATABASE NAME)"
    return SchemaError(f"not an mt-eval leaderboard store (it has the tables {shown}): {fix}")


def _version_lost(connection: sa.Connection) -> SchemaError:
    """A store that holds its cards but has lost the record of its schema version: damaged. Its version is not
    guessed (a newer mt-eval's store may have the same tables), nor recorded again by a publish."""
    from mt_eval.corpus.model import plural

    held = int(connection.execute(sa.text("SELECT count(*) FROM cards")).scalar() or 0)
    latest = max(m.version for m in MIGRATIONS)
    return SchemaError(
        f"a damaged leaderboard store: it holds {plural(held, 'card')} but no record of its schema version (its "
        "schema_version table is empty), and mt-eval does not guess it. Restore the store from a backup; or, if you "
        f"know the version that wrote it (this mt-eval writes version {latest}), record it: INSERT INTO "
        "schema_version (version, description, applied_at) VALUES (VERSION, 'restored', 'YYYY-MM-DD')")


def pending(current: int, migrations: Sequence[Migration] | None = None) -> bool:
    """Whether a store of schema version ``current`` has migrations to apply; `SchemaError` when it is newer
    than the last one known here."""
    latest = max((m.version for m in (MIGRATIONS if migrations is None else migrations)), default=0)
    if current > latest:
        raise SchemaError(f"the store's schema is version {current}, newer than this mt-eval knows ({latest}): "
                          "upgrade mt-eval-sdk to use it")
    return current < latest


def unreadable(connection: sa.Connection) -> str | None:
    """Why a store (one moved over the file being read) cannot be read as it is, or None: another application's
    database, an incomplete store, or one of a schema other than this mt-eval's (older: a publish upgrades it)."""
    try:
        current = current_version(connection)
        behind = pending(current)
    except IncompleteStore:
        return "its tables are incomplete: publishing a card into it makes them again"
    except SchemaError as exc:
        return str(exc)
    return f"its schema is version {current}, older than this mt-eval reads: publishing a card into it upgrades " \
        "it" if behind else None


def migrate(connection: sa.Connection, migrations: Sequence[Migration] | None = None) -> list[int]:
    """Apply the pending migrations inside the caller's (write) transaction; the versions applied."""
    migrations = MIGRATIONS if migrations is None else migrations
    lock(connection)
    try:
        current = current_version(connection)
    except IncompleteStore as incomplete:  # its tables made again, their migrations recorded already
        current = incomplete.version
        for migration in sorted(migrations, key=lambda m: m.version):
            if migration.version <= current:
                migration.apply(connection)
    if not pending(current, migrations):
        return []
    _VERSIONS.create_all(connection, checkfirst=True)
    applied = []
    for migration in sorted(migrations, key=lambda m: m.version):
        if migration.version <= current:
            continue
        migration.apply(connection)
        connection.execute(sa.insert(schema_version).values(
            version=migration.version, description=migration.description,
            applied_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")))
        applied.append(migration.version)
    return applied
