"""A publisher waiting for another's write lock on an SQLite store: it gets the lock as soon as the other lets
go, and Ctrl-C stops it at once (SQLite's own wait, of up to a minute, had held it through Ctrl-C)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import write_card


def held_store(cards, tmp_path: Path) -> tuple[str, Path, sqlite3.Connection]:
    db = str(tmp_path / "board.db")
    open_store(db).close()
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)  # (let go from a timer)
    holder.execute("BEGIN IMMEDIATE")  # another writer, mid-transaction (or stopped with Ctrl-Z)
    return db, write_card(cards.card("m-0", quality=0.5, run_id="run-0"), tmp_path / "run" / "card.json"), holder


def publisher(db: str, card: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "publish", str(card), "--db", db, "--no-input"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_ctrl_c_stops_a_publisher_waiting_for_another_writers_lock(cards, tmp_path: Path):
    db, card, holder = held_store(cards, tmp_path)
    process = publisher(db, card)
    try:
        time.sleep(2.0)  # (started, and waiting for the lock)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = process.communicate(timeout=70)
        waited = time.monotonic() - sent
    finally:
        process.kill()
        holder.rollback()
        holder.close()
    assert process.returncode == 130 and "interrupted; nothing was published" in err, err
    assert waited < 5, f"Ctrl-C took {waited:.1f} s to stop it"  # (it had waited for the lock: up to 60 s)
    with open_store(db) as store:
        assert store.count() == 0


def test_a_waiting_publisher_publishes_once_the_other_writer_lets_go(cards, tmp_path: Path):
    db, card, holder = held_store(cards, tmp_path)
    process = publisher(db, card)
    releaser = threading.Timer(1.5, holder.rollback)
    releaser.start()
    try:
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        releaser.join()
        holder.close()
    assert process.returncode == 0 and "published #1 m-0" in out, err
