"""`mt-eval publish` whose standard output fails once the cards are stored: a full disk says how many were stored
and where (they are not to be published again), and a reader gone mid-report ends it with 141, the cards kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import write_card

MT_EVAL = [sys.executable, "-m", "mt_eval.cli"]
FULL = Path("/dev/full")


def count(db: Path) -> int:
    with open_store(str(db)) as store:
        return store.count()


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full here")
@pytest.mark.parametrize("json_option", [[], ["--json"]])
def test_a_full_disk_says_how_many_cards_were_stored_and_where(cards, tmp_path: Path, json_option: list[str]):
    """Before, it said only that standard output could not be written: the user could not tell that the cards
    were stored, and publishing them again refused every one as a duplicate."""
    paths = [write_card(cards.card(f"m-{i}", run_id=f"run-{i}"), tmp_path / f"r{i}" / "card.json") for i in range(3)]
    db = tmp_path / "board.db"
    with FULL.open("w") as full:
        done = subprocess.run([*MT_EVAL, "publish", *map(str, paths), "--db", str(db), "--no-input", *json_option],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == ("mt-eval publish: cannot write to standard output: No space left on device; 3 cards were "
                           f"published all the same (stored in {db}): do not publish them again\n")
    assert count(db) == 3


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_reader_gone_mid_report_ends_it_with_141_and_the_cards_stay_stored(cards, tmp_path: Path,
                                                                            unbuffered: str):
    """Before, under python -u (PYTHONUNBUFFERED), what a write cut short by the reader's leaving had not written
    was dropped unsaid: `mt-eval publish … --json | head -c 100` exited 0."""
    deep = tmp_path.joinpath(*["d" * 200] * 8)  # (long names: a report far larger than a pipe's 64 KiB)
    paths = [write_card(cards.card(f"m-{i}", run_id=f"run-{i}"), deep / f"r{i:02d}" / "card.json") for i in range(48)]
    db = tmp_path / "board.db"
    with subprocess.Popen([*MT_EVAL, "publish", *map(str, paths), "--db", str(db), "--no-input", "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, "PYTHONUNBUFFERED": unbuffered}) as publishing:
        assert publishing.stdout is not None and publishing.stderr is not None
        assert len(os.read(publishing.stdout.fileno(), 100)) == 100  # (the report has begun: every card is stored)
        publishing.stdout.close()
        said = publishing.stderr.read()
        status = publishing.wait(timeout=120)
    assert (status, said) == (141, b"")
    assert count(db) == 48
