"""`mt-eval leaderboard serve`: the pages rendered from the live store on loopback, and what it says when the
store holds a damaged row."""

from __future__ import annotations

import json
import re
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
    assert server.stderr.count("warning: shown without its detail page: row #1 (run ") == 1, server.stderr
    assert "Traceback" not in server.stderr
