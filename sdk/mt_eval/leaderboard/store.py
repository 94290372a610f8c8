"""The leaderboard store: published run cards in SQLite (the embedded default) or PostgreSQL (for a team or a
public board), through one SQLAlchemy Core code path.

Where the store is comes from ``--db``, ``$MT_EVAL_DB`` or the default file (`mt_eval.leaderboard.address`).
SQLite runs in WAL mode, so readers never wait for a
publisher, and writes take the write lock up front (``BEGIN IMMEDIATE``) with a generous busy timeout;
PostgreSQL publishers are serialised by an advisory lock. The unique content hash and run id are the last
line of defence: two processes publishing the same card at once store it once and tell the second why.
Each publish is one transaction: it is stored whole or not at all. Opened only to read (the board), a
store is not created, migrated or even put in WAL mode: the database is left exactly as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa

from mt_eval.interrupts import held
from mt_eval.leaderboard import StoreError
from mt_eval.leaderboard.address import describe, resolve_url
from mt_eval.leaderboard.migrations import IncompleteStore, SchemaError, current_version, lock, migrate, pending
from mt_eval.leaderboard.store_engine import (
    checkpoint,
    failure_reason,
    new_engine,
    on_read_only_file_system,
    unreached_advice,
)
from mt_eval.leaderboard.store_file import FileHold, check_file, followed

CHUNK = 500  # ids per IN (...) list

cards = sa.table(
    "cards", *(sa.column(name) for name in (
        "id", "content_sha256", "run_id", "published_at", "finished_at", "method_id", "method_class",
        "dependency_class", "pair", "corpus_name", "corpus_sha256", "ranking_key", "headline_score", "row_json",
        "card_json")))
COLUMNS = tuple(c.name for c in cards.columns if c.name != "id")
JSON_COLUMNS = frozenset({"row_json", "card_json"})  # a record may hold these as UTF-8 bytes


Status = Literal["published", "duplicate", "conflict"]


@dataclass(frozen=True)
class Outcome:
    """What publishing one card did: ``published``, or refused as a ``duplicate`` or a ``conflict`` (another
    card with the same run id)."""

    content_sha256: str
    run_id: str
    status: Status
    id: int
    published_at: str


@dataclass(frozen=True)
class Damaged:
    """A stored row whose ``column`` (``row_json``: the row shown; ``card_json``: its card) cannot be read."""

    id: int
    run_id: str
    column: str
    reason: str
    where: str

    def __str__(self) -> str:
        return (f"row #{self.id} (run {self.run_id}) of the leaderboard store {self.where} is damaged: its "
                f"{self.column} cannot be read ({self.reason}); delete it (DELETE FROM cards WHERE id = {self.id}) "
                "and publish its card again")


class Store:
    """An open store. Use `open_store`; close it (or use ``with``) when done. A damaged row (`Damaged`) is a
    `StoreError`, or, given ``on_damaged``, passed to it and left out of what is read."""

    def __init__(self, engine: sa.Engine, url: sa.URL, on_damaged: Callable[[Damaged], None] | None = None) -> None:
        self.engine = engine
        self.url = url
        self.where = describe(url)
        self.hold: FileHold | None = None  # a publisher's hold on its SQLite file (`open_store` takes it)
        self.wrote = False  # a transaction of this store's committed (else closing it has no log to empty)
        self.on_damaged = on_damaged
        self._file = Path(url.database) if url.get_backend_name() == "sqlite" and url.database else None
        self._identity = self._file_identity()
        self._schema_known = True  # (`open_store` read it; a file moved over this one is read again: `reading`)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        hold, self.hold = self.hold, None
        if hold is not None and self.wrote:  # a publisher's log is emptied (`store_engine.checkpoint`); one that
            checkpoint(self.engine)  # wrote nothing (Ctrl-C as it waited for another's lock) does not wait for it
        self.engine.dispose()
        if hold is not None:
            hold.release()

    def close_or_discard(self) -> None:
        """Close the store; when `open_store` created its SQLite file, no other publisher uses it, and it holds no
        card, delete it (`mt_eval.leaderboard.store_file`): a publish that stored nothing leaves no empty store."""
        empty = False
        if self.hold is not None and self.hold.alone():
            with suppress(StoreError):  # (unreadable: left as it is, for the user to see)
                empty = self.count() == 0
        if empty and self.hold is not None:
            self.engine.dispose()
            hold, self.hold = self.hold, None
            hold.delete()
            hold.release()
        self.close()

    @contextmanager
    def writing(self, on_commit: Callable[[], None] | None = None) -> Iterator[sa.Connection]:
        """A write transaction: committed whole when the block ends, rolled back on any error. ``on_commit`` runs
        as it commits, Ctrl-C held back meanwhile (`mt_eval.interrupts.held`): a commit is never followed by an
        interrupt that leaves its caller without the record of what it committed."""
        with self._errors("write to"), self.engine.connect() as connection:
            connection.execution_options(mt_eval_write=True)
            transaction = connection.begin()
            try:
                lock(connection)
                yield connection
            except BaseException:
                transaction.rollback()
                raise
            with held():
                transaction.commit()
                self.wrote = True
                if on_commit is not None:
                    on_commit()

    @contextmanager
    def reading(self) -> Iterator[sa.Connection]:
        self._follow_file()
        with self._errors("read"), self.engine.connect() as connection, connection.begin():
            if not self._schema_known:  # (a file moved over the one read: a newer mt-eval's, another database's)
                from mt_eval.leaderboard.migrations import unreadable

                if (why := unreadable(connection)) is not None:
                    raise StoreError(f"the leaderboard store {self.where} was replaced by one it cannot read: {why}")
                self._schema_known = True
            yield connection

    def _file_identity(self) -> tuple[int, int] | None:
        try:
            found = self._file.stat() if self._file is not None else None
        except OSError:
            return None
        return None if found is None else (found.st_dev, found.st_ino)

    def _follow_file(self) -> None:
        """An SQLite store whose file was replaced (a new store moved over it) is read from the new file: the
        pool's connections, open on the old one, are closed. A file that is gone is an error, not a new store."""
        if self._file is None:
            return
        identity = self._file_identity()
        if identity is None and self._identity is not None:
            raise StoreError(f"the leaderboard store {self.where} is gone (its file was moved or deleted)")
        if identity != self._identity:
            self.engine.dispose()
            self._identity, self._schema_known = identity, False

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sa.exc.DBAPIError as exc:  # nothing of the transaction is kept
            raise StoreError(f"cannot {doing} the leaderboard store {self.where}: {failure_reason(self.url, exc)}") \
                from exc

    def publish(self, records: Sequence[dict[str, Any]], published_at: str, *, stop_at_refusal: bool = False,
                committed: Callable[[list[Outcome]], None] | None = None) -> list[Outcome]:
        """Store ``records`` (column → value, one per card; a JSON column may be its UTF-8 bytes) in one
        transaction, each unless a card with the same content hash or run id is already stored. One outcome per
        record, in order; with ``stop_at_refusal``, the records after the first conflict (a run id stored with
        other content) are neither stored nor given an outcome. ``committed`` gets the outcomes as the
        transaction commits (so a Ctrl-C that ends this call right after it does not lose them)."""
        outcomes: list[Outcome] = []
        with self.writing(on_commit=None if committed is None else lambda: committed(outcomes)) as connection:
            stored = self._existing(connection, [r["content_sha256"] for r in records], [r["run_id"] for r in records])
            by_sha = {row.content_sha256: row for row in stored}
            by_run = {row.run_id: row for row in stored}
            fresh: dict[str, dict[str, Any]] = {}
            fresh_runs: dict[str, str] = {}  # run id → content hash, of the cards being published now
            pending: list[tuple[Status, Any]] = []
            for record in records:
                sha, run = record["content_sha256"], record["run_id"]
                if sha in by_sha or run in by_run:
                    pending.append(("duplicate", by_sha[sha]) if sha in by_sha else ("conflict", by_run[run]))
                elif sha in fresh or run in fresh_runs:  # repeated within this batch
                    pending.append(("duplicate", sha) if sha in fresh else ("conflict", fresh_runs[run]))
                else:
                    fresh[sha] = {**record, "published_at": published_at}
                    fresh_runs[run] = sha
                    pending.append(("published", sha))
                if stop_at_refusal and pending[-1][0] == "conflict":  # (a duplicate is stored already: on)
                    break
            ids: dict[str, int] = {}
            if fresh:  # inserted, then the new ids by hash
                _insert(connection, fresh.values())
                shas = list(fresh)
                for start in range(0, len(shas), CHUNK):
                    found = connection.execute(sa.select(cards.c.content_sha256, cards.c.id)
                                               .where(cards.c.content_sha256.in_(shas[start:start + CHUNK])))
                    ids.update((sha, id_) for sha, id_ in found)
            for record, (status, found) in zip(records, pending, strict=False):
                if isinstance(found, str):  # published now, or a repeat of a card published now
                    outcomes.append(Outcome(record["content_sha256"], record["run_id"], status, ids[found],
                                            published_at))
                else:
                    outcomes.append(Outcome(record["content_sha256"], record["run_id"], status, found.id,
                                            found.published_at))
        return outcomes

    def _existing(self, connection: sa.Connection, shas: list[str], runs: list[str]) -> list[Any]:
        found: dict[int, Any] = {}
        columns = (cards.c.id, cards.c.content_sha256, cards.c.run_id, cards.c.published_at)
        for column, values in ((cards.c.content_sha256, shas), (cards.c.run_id, runs)):
            for start in range(0, len(values), CHUNK):
                for row in connection.execute(sa.select(*columns).where(column.in_(values[start:start + CHUNK]))):
                    found[row.id] = row
        return list(found.values())

    def rows(self, *, pairs: Sequence[str] = (), corpora: Sequence[str] = (), classes: Sequence[str] = ()
             ) -> list[dict[str, Any]]:
        """The stored rows (``row_json`` with the store's id and publication time), filtered in the database."""
        query = sa.select(cards.c.id, cards.c.run_id, cards.c.published_at, cards.c.row_json).order_by(cards.c.id)
        if pairs:
            query = query.where(cards.c.pair.in_(pairs))
        if corpora:  # a name, or a SHA-256 prefix (hex digits: "%" and "_" are no wildcards)
            query = query.where(sa.or_(*(sa.or_(cards.c.corpus_name == c, cards.c.corpus_sha256.startswith(
                c.lower(), autoescape=True) if re.fullmatch("[0-9a-fA-F]+", c) else sa.false()) for c in corpora)))
        if classes:
            query = query.where(sa.or_(cards.c.method_class.in_(classes), cards.c.dependency_class.in_(classes)))
        with self.reading() as connection:
            return [{**shown, "id": row.id, "published_at": row.published_at} for row in connection.execute(query)
                    if (shown := self._json(row, "row_json")) is not None]

    def card(self, content_sha256_prefix: str) -> dict[str, Any] | None:
        """The published card whose content hash starts with the prefix (at least 8 hex digits), or None."""
        if len(content_sha256_prefix) < 8:
            return None
        query = sa.select(cards.c.id, cards.c.run_id, cards.c.card_json).where(
            cards.c.content_sha256.startswith(content_sha256_prefix)).limit(2)
        with self.reading() as connection:
            found = connection.execute(query).all()
        return self._json(found[0], "card_json") if len(found) == 1 else None

    def documents(self, ids: Sequence[int]) -> Iterator[tuple[int, dict[str, Any]]]:
        """(store id, published card) for each id, read in chunks."""
        for start in range(0, len(ids), CHUNK):
            query = sa.select(cards.c.id, cards.c.run_id, cards.c.card_json).where(
                cards.c.id.in_(ids[start:start + CHUNK]))
            with self.reading() as connection:
                found = connection.execute(query).all()
            for row in found:
                if (card := self._json(row, "card_json")) is not None:
                    yield row.id, card

    def _json(self, row: Any, column: str) -> dict[str, Any] | None:
        """The JSON object in ``row``'s ``column``; None when it is damaged and ``on_damaged`` was told."""
        import msgspec

        try:
            value = msgspec.json.decode(getattr(row, column))
            reason = None if isinstance(value, dict) else f"a JSON {type(value).__name__}, not an object"
            if reason is None:
                reason = _not_of_its_shape(value, column)
        except msgspec.DecodeError as exc:
            value, reason = None, str(exc)
        if reason is None:
            return value  # type: ignore[no-any-return]
        damaged = Damaged(row.id, row.run_id, column, reason, self.where)
        if self.on_damaged is None:
            raise StoreError(str(damaged))
        self.on_damaged(damaged)
        return None

    def count(self) -> int:
        with self.reading() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(cards)).scalar() or 0)


def _not_of_its_shape(value: dict[str, Any], column: str) -> str | None:
    """Why a stored JSON object is not what its column holds (a leaderboard row, a run card): a field missing or
    of the wrong type. None when it is."""
    import msgspec

    from mt_eval.harness.runcard import RunCard
    from mt_eval.leaderboard.rows import Row

    shape, name = (Row, "a leaderboard row") if column == "row_json" else (RunCard, "a run card")
    try:
        msgspec.convert(value, shape)
    except msgspec.ValidationError as exc:
        return f"not {name}: {exc}"
    return None


def _insert(connection: sa.Connection, records: Iterable[dict[str, Any]]) -> None:
    """One plain executemany (a prepared statement, re-run per row). SQLite's text is UTF-8, so it is given a
    JSON column held as UTF-8 bytes cast to text: stored as it is, not decoded here for the driver to encode
    it again. Other databases are given text."""
    if connection.dialect.name == "sqlite":
        marks = ["CAST(? AS TEXT)" if column in JSON_COLUMNS else "?" for column in COLUMNS]
        rows = [tuple([record[column] for column in COLUMNS]) for record in records]
    else:
        marks = ["%s" if connection.dialect.paramstyle != "qmark" else "?"] * len(COLUMNS)
        rows = [tuple([_text(record[column]) for column in COLUMNS]) for record in records]
    connection.exec_driver_sql(f"INSERT INTO cards ({', '.join(COLUMNS)}) VALUES ({', '.join(marks)})", rows)


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def open_store(db: str | None = None, *, create: bool = True, on_damaged: Callable[[Damaged], None] | None = None
               ) -> Store:
    """Open the store for publishing: create or migrate it when ``create``; else only to read it, changing
    nothing. `StoreError` says why it cannot be used: there is no store there (reading), the database is
    another application's or a newer mt-eval's, or it cannot be reached. ``on_damaged``: see `Store`."""
    url = resolve_url(db)
    where = describe(url)
    hold = None
    if url.get_backend_name() == "sqlite":
        file = followed(Path(url.database or ""))
        check_file(file, where, create=create, nothing_at=_nothing_at(where))
        if create and on_read_only_file_system(file):
            raise StoreError(f"cannot publish into the leaderboard store {where}: it is on a read-only file system "
                             + ("(copy it somewhere writable, publish there, and copy it back)" if file.exists()
                                else "(name a store elsewhere with --db)"))
        hold = FileHold.take(file) if create else None  # (held from before its first use: store_file.py)
    try:
        store = _opened(url, where, create, on_damaged)
    except BaseException:
        if hold is not None:
            if hold.alone():  # (a file it made for a store that could not be opened is not left behind)
                hold.delete()
            hold.release()
        raise
    store.hold = hold
    return store


def _opened(url: sa.URL, where: str, create: bool, on_damaged: Callable[[Damaged], None] | None) -> Store:
    store = Store(new_engine(url), url, on_damaged)  # reads only: a database that is not a store is left as it was
    with _opening(store), store.reading() as connection:  # the common case: nothing to migrate, no write lock
        try:
            current = current_version(connection)
            behind = pending(current)
        except IncompleteStore:  # (read: said so; published into: `migrate` makes its tables again)
            if not create:
                raise
            behind = True
    if not create:
        if behind:
            store.close()
            raise StoreError(_nothing_at(where) if current == 0 else f"the leaderboard store {where} has schema "
                             f"version {current}, older than this mt-eval reads: publishing a card into it upgrades it")
        return store
    store.close()
    store = Store(new_engine(url, writable=True), url, on_damaged)
    if behind:
        with _opening(store), store.writing() as connection:
            migrate(connection)
    return store


def _nothing_at(where: str) -> str:
    return (f"no leaderboard store at {where} yet: publish a card first (mt-eval publish CARD), or name the store "
            "with --db")


@contextmanager
def _opening(store: Store) -> Iterator[None]:
    """Errors while opening ``store`` as `StoreError`s naming it (and closing it)."""
    try:
        yield
    except SchemaError as exc:
        store.close()
        raise StoreError(f"{store.where}: {exc}") from exc
    except StoreError as exc:
        store.close()
        raise StoreError(re.sub(r"^cannot (write to|read)", "cannot open", str(exc))
                         + unreached_advice(store.url, exc)) from exc.__cause__
    except sa.exc.DBAPIError as exc:
        store.close()
        raise StoreError(f"cannot open the leaderboard store {store.where}: {failure_reason(store.url, exc)}") from exc
