"""A PostgreSQL store whose server stops answering (frozen: its kernel still acknowledges every packet) fails the
read or the publish with a message that says so, after `server_silence.SILENCE_LIMIT_S`, instead of waiting for
ever; the store works again once the server does."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from mt_eval.leaderboard import StoreError, server_silence
from mt_eval.leaderboard.store import Store, open_store


class Silent(Exception):
    pass


def waits(readiness: list[int]):
    """A psycopg-like wait: yields what it waits for, is sent what was ready, returns once all were read."""
    for _ in readiness:
        yield "read"
    return "answer"


def drive(wait, readiness: list[int], clock: list[float], tick_s: float):
    """Play ``readiness`` into ``wait`` as psycopg's waiting loop does, the clock moving ``tick_s`` a step."""
    waiting_for = next(wait)
    try:
        for ready in readiness:
            assert waiting_for == "read"
            clock[0] += tick_s
            waiting_for = wait.send(ready)
    except StopIteration as done:
        return done.value
    raise AssertionError("the wait did not end")


def on_silence(seconds: float) -> None:
    raise Silent(seconds)


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(server_silence.time, "monotonic", lambda: now[0])
    return now


def test_a_wait_that_hears_from_the_server_in_time_goes_on(clock):
    readiness = [0] * 9 + [1] + [0] * 9 + [1]  # idle ticks, but never a whole second of them in a row
    wait = server_silence.silence_limited(waits(readiness), 1.0, on_silence)
    assert drive(wait, readiness, clock, 0.1) == "answer"


def test_a_wait_that_hears_nothing_for_the_limit_is_given_up(clock):
    readiness = [1] + [0] * 30
    wait = server_silence.silence_limited(waits(readiness), 1.0, on_silence)
    with pytest.raises(Silent) as raised:
        drive(wait, readiness, clock, 0.1)
    assert 1.0 <= raised.value.args[0] < 1.2  # from the first idle tick, not from the start of the wait


@contextmanager
def frozen_backend(store: Store) -> Iterator[int]:
    """The server process behind the store's pooled connection, stopped (SIGSTOP) until the block ends."""
    with store.reading() as connection:
        pid = int(connection.execute(sa.text("SELECT pg_backend_pid()")).scalar_one())
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.fixture
def pg_store(postgres_cluster, monkeypatch) -> Iterator[Store]:
    monkeypatch.setattr(server_silence, "SILENCE_LIMIT_S", 1.5)
    store = open_store(postgres_cluster.database())
    try:
        yield store
    finally:
        store.close()


def test_a_read_from_a_frozen_server_fails_saying_so_and_the_store_recovers(pg_store: Store):
    with frozen_backend(pg_store):
        started = time.monotonic()
        with pytest.raises(StoreError) as raised:
            pg_store.count()
        waited = time.monotonic() - started
    assert 1.5 <= waited < 6
    message = str(raised.value)
    assert message.startswith(f"cannot read the leaderboard store {pg_store.where}: the server has answered nothing ")
    assert "(is it stopped, frozen or overloaded?)" in message
    assert pg_store.count() == 0  # the closed connection was dropped from the pool: a new one is made


def test_a_publish_to_a_frozen_server_fails_and_keeps_nothing(pg_store: Store, cards, tmp_path: Path):
    from mt_eval.leaderboard.publish import prepare
    from mt_eval.leaderboard.synthetic import write_card

    path = write_card(cards.card("m-0", quality=0.5, run_id="run-0"), tmp_path / "run" / "card.json")
    record = prepare(path, no_input=True).record
    with frozen_backend(pg_store), pytest.raises(StoreError) as raised:
        pg_store.publish([record], "2026-12-06T00:00:00+00:00")
    assert str(raised.value).startswith(f"cannot write to the leaderboard store {pg_store.where}: the server has "
                                        "answered nothing ")
    assert pg_store.count() == 0
    assert [o.status for o in pg_store.publish([record], "2026-12-06T00:00:00+00:00")] == ["published"]


def test_a_publisher_waiting_for_another_s_lock_is_not_taken_for_a_silent_server():
    from mt_eval.leaderboard.store_engine import BUSY_TIMEOUT_S

    assert server_silence.SILENCE_LIMIT_S >= BUSY_TIMEOUT_S + 10  # (the lock's wait ends first, saying so)


def test_a_server_that_answers_within_the_limit_is_waited_for(pg_store: Store):
    with pg_store.reading() as connection:
        assert connection.execute(sa.text("SELECT pg_sleep(0.5), 7")).all()[0][1] == 7
