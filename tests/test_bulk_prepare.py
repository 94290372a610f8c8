"""Where many cards are prepared makes no difference to what is published: prepared here or by a pool of
worker processes, the same cards give the same stored rows and the same refusals; the pool is used only when
it pays; and the JSON columns a worker sends as bytes are stored as text."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from mt_eval.harness.verify import canonical_json
from mt_eval.leaderboard import bulk
from mt_eval.leaderboard.bulk import Options, pooled, publish_cards
from mt_eval.leaderboard.preparers import Preparers
from mt_eval.leaderboard.publish import prepare
from mt_eval.leaderboard.store import COLUMNS, open_store
from mt_eval.leaderboard.synthetic import CardFactory, write_card

pytestmark = pytest.mark.skipif(os.name != "posix", reason="worker processes are forked on Linux")


def awkward_mix(cards: CardFactory, root: Path) -> list[Path]:
    """Good cards among every kind a publish refuses: tampered, unreadable, not JSON, failing the gate, a
    card given twice, another card of a published run."""
    paths = [write_card(cards.card(f"m-{i:02d}", quality=(i % 5) / 5, run_id=f"run-{i:02d}"),
                        root / f"run-{i:02d}" / "card.json") for i in range(24)]
    tampered = json.loads(paths[4].read_text())
    tampered["results"][0]["predicted"] = "edited"
    paths[4].write_text(json.dumps(tampered))
    paths[9].write_text("{ not json")
    short = write_card(cards.card("short", limit=10, run_id="short-run"), root / "short" / "card.json")
    altered = write_card(cards.card("m-02", quality=0.9, variant=3, run_id="run-02"), root / "altered" / "card.json")
    return [*paths[:12], root / "absent" / "card.json", short, paths[3], *paths[12:], altered]


def published(db: str, paths: list[Path], options: Options) -> tuple[list[tuple[object, ...]], list[tuple]]:
    """(what became of each card, the stored rows without their publication time)."""
    with open_store(db) as store:
        result = publish_cards(store, paths, options)
    assert result.store_error is None and not result.interrupted
    fates = [(c.path, c.error, None if c.outcome is None else (c.outcome.status, c.outcome.id)) for c in result.cards]
    connection = sqlite3.connect(db)
    try:
        kept = [c for c in COLUMNS if c != "published_at"]
        rows = connection.execute(f"SELECT id, {', '.join(kept)} FROM cards ORDER BY id").fetchall()
    finally:
        connection.close()
    return fates, rows


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of worker processes of each pool started."""
    started: list[int] = []

    class Counted(Preparers):  # type: ignore[type-arg]
        def __enter__(self):  # type: ignore[no-untyped-def]
            started.append(len(self._processes))
            return super().__enter__()

    monkeypatch.setattr(bulk, "Preparers", Counted)
    return started


@pytest.mark.parametrize("recompute", [True, False])
def test_cards_prepared_here_or_by_workers_give_the_same_rows_and_refusals(cards, tmp_path: Path, pools: list[int],
                                                                          monkeypatch, recompute: bool):
    paths = awkward_mix(cards, tmp_path)
    here = published(str(tmp_path / "here.db"), paths, Options(no_input=True, workers=1, recompute=recompute))
    assert pools == []
    monkeypatch.setattr(bulk, "PARALLEL_FROM_UNSCORED", 8)  # so few cards go to the pool without recomputing too
    pooled_ = published(str(tmp_path / "pooled.db"), paths, Options(no_input=True, workers=2, recompute=recompute))
    assert pools == [2]
    assert pooled_ == here
    fates, rows = here
    refused = {path.parent.name: error for path, error, _ in fates if error is not None}
    assert sorted(refused) == ["absent", "run-04", "run-09", "short"]
    assert "cannot read it" in refused["absent"] and "$.content_sha256" in refused["run-04"]
    assert "does not pass the gate" in refused["short"] and "scored" in refused["short"]
    outcomes = [outcome[0] for _, _, outcome in fates if outcome is not None]
    assert outcomes.count("duplicate") == 1 and outcomes.count("conflict") == 1 and len(rows) == 22


def test_the_pool_is_used_only_when_the_work_pays_for_it():
    assert not pooled(bulk.PARALLEL_FROM - 1, True, 2) and pooled(bulk.PARALLEL_FROM, True, 2)
    assert not pooled(bulk.PARALLEL_FROM_UNSCORED - 1, False, 2) and pooled(bulk.PARALLEL_FROM_UNSCORED, False, 2)
    assert not pooled(100_000, True, 1)  # one core: nothing to share the work with
    assert 1 <= bulk.usable_cores() <= (os.cpu_count() or 1)


def test_a_small_publish_is_prepared_here(cards, tmp_path: Path, pools: list[int]):
    paths = [write_card(cards.card(f"m-{i}", run_id=f"run-{i}"), tmp_path / f"run-{i}" / "card.json")
             for i in range(bulk.PARALLEL_FROM - 1)]
    with open_store(str(tmp_path / "board.db")) as store:
        result = publish_cards(store, paths, Options(no_input=True, workers=2))
    assert result.stored == len(paths) and pools == []


def test_json_columns_given_as_bytes_or_text_are_stored_as_the_same_text(cards, tmp_path: Path):
    path = write_card(cards.card("m-0", run_id="run-0"), tmp_path / "run-0" / "card.json")
    record = prepare(path, no_input=True).record
    assert isinstance(record["card_json"], bytes) and isinstance(record["row_json"], bytes)
    as_text = {**record, "card_json": record["card_json"].decode(), "row_json": record["row_json"].decode()}
    for name, given in (("bytes.db", record), ("text.db", as_text)):
        with open_store(str(tmp_path / name)) as store:
            [outcome] = store.publish([given], "2026-01-01T00:00:00+00:00")
            assert outcome.status == "published"
    stored = []
    for name in ("bytes.db", "text.db"):
        connection = sqlite3.connect(tmp_path / name)
        stored.append(connection.execute("SELECT typeof(card_json), typeof(row_json), card_json, row_json "
                                         "FROM cards").fetchone())
        connection.close()
    assert stored[0] == stored[1] and stored[0][:2] == ("text", "text")
    data = msgspec.json.decode(path.read_bytes())
    assert stored[0][2] == canonical_json(data)[1].decode() and "ñ" in stored[0][2]  # UTF-8 text, not escaped


def _signal_state(chunk: Sequence[int], state: object) -> tuple[bool, bool]:
    """In a worker: whether Ctrl-C is ignored there, and whether it is held back (blocked)."""
    import signal

    return (signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
            signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set()))


def test_a_publishing_worker_ignores_ctrl_c_and_this_process_still_hears_it():
    """Ctrl-C is held back while the workers are forked (one forked before it ignored Ctrl-C printed a traceback);
    each then ignores it, unblocked, and this process's mask is as it was."""
    import signal

    from mt_eval.leaderboard.preparers import Preparers

    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    with Preparers([[1], [2]], _signal_state, setup=lambda: None, workers=2) as preparers:
        assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
        assert list(preparers.results()) == [(True, False), (True, False)]
