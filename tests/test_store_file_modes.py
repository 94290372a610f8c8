"""A store file this user may only read (chmod a-w, or another user's): publishing into it is refused before
SQLite opens it, saying so and how to make it writable. SQLite had refused only as it wrote ("attempt to write a
readonly database") and left a log and an index beside the file that only read, as the file does, so the store
could still not be published into once the file was made writable; such a log or index is now named with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card

SETPRIV = shutil.which("setpriv")


def as_a_user(*mt_eval: str) -> subprocess.CompletedProcess[str]:
    """``mt-eval ARGS`` as a user bound by file modes: root gives up the capability to override them."""
    command = [sys.executable, "-m", "mt_eval.cli", *mt_eval]
    if os.geteuid() == 0:
        caps = "-dac_override,-dac_read_search"
        command = [str(SETPRIV), "--bounding-set", caps, "--inh-caps", caps, *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(os.geteuid() == 0 and SETPRIV is None, reason="root writes any file, and no setpriv is here")
def test_a_store_file_that_only_reads_is_refused_before_sqlite_opens_it(tmp_path: Path, cards):
    store = tmp_path / "shelf" / "board.db"
    store.parent.mkdir()
    alpha = write_card(cards.card("alpha", quality=0.8), tmp_path / "cards" / "alpha.json")
    beta = write_card(cards.card("beta", quality=0.7), tmp_path / "cards" / "beta.json")
    assert main(["publish", str(alpha), "--db", str(store), "--no-input"]) == 0
    store.chmod(0o444)

    done = as_a_user("publish", str(beta), "--db", str(store), "--no-input")
    assert done.returncode == 1
    assert (f"cannot publish into the leaderboard store {store}: it is read-only for this user (make it writable: "
            f"chmod u+w {store}; or publish as the user who owns the store); nothing was published") in done.stderr
    assert sorted(p.name for p in store.parent.iterdir()) == ["board.db"]  # nothing made beside it

    assert as_a_user("leaderboard", "--db", str(store), "--json").returncode == 0  # (read as it is)
    store.chmod(0o644)
    beside = [p for p in (Path(f"{store}-wal"), Path(f"{store}-shm")) if p.exists()]
    if beside:  # (a reader of the read-only file left them, read-only too): named, with the fix
        done = as_a_user("publish", str(beta), "--db", str(store), "--no-input")
        assert done.returncode == 1
        assert "which SQLite keeps beside it" in done.stderr and "read-only for this user" in done.stderr
        assert f"chmod u+w {' '.join(str(p) for p in beside)};" in done.stderr
        for path in beside:
            path.chmod(0o644)
    done = as_a_user("publish", str(beta), "--db", str(store), "--no-input")
    assert done.returncode == 0, done.stderr


def test_a_symbolic_link_to_a_store_not_made_yet_makes_it_where_it_leads(tmp_path: Path, cards, capsys):
    """Before: publishing through a link to a file not made yet failed, saying the file "is deleted as soon as it is
    made", while the board said to publish a card first; a link into no directory did the same."""
    card = write_card(cards.card("alpha", quality=0.8), tmp_path / "cards" / "alpha.json")
    (tmp_path / "boards").mkdir()
    link = tmp_path / "board.db"
    link.symlink_to(tmp_path / "boards" / "main.db")
    assert main(["publish", str(card), "--db", str(link), "--no-input"]) == 0
    assert link.is_symlink() and sorted(p.name for p in (tmp_path / "boards").iterdir()) == ["main.db"]
    assert main(["leaderboard", "--db", str(link), "--json"]) == 0
    capsys.readouterr()

    nowhere = tmp_path / "nowhere.db"
    nowhere.symlink_to(tmp_path / "no-such-directory" / "main.db")
    assert main(["publish", str(card), "--db", str(nowhere), "--no-input"]) == 1
    assert (f"cannot create the leaderboard store {nowhere}: the directory {tmp_path / 'no-such-directory'} does not "
            "exist; nothing was published") in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["named pipe", "character device"])
def test_a_store_that_is_no_regular_file_is_said_so(tmp_path: Path, cards, capsys, kind: str):
    """Before: a named pipe or a device given as the store was "disk I/O error"."""
    card = write_card(cards.card("alpha", quality=0.8), tmp_path / "cards" / "alpha.json")
    store = tmp_path / "pipe.db"
    if kind == "named pipe":
        os.mkfifo(store)
    else:
        store = Path(os.devnull)
    for command in (["publish", str(card), "--no-input"], ["leaderboard"]):
        assert main([*command, "--db", str(store)]) == 1
        assert (f"{store} is not a regular file (it is a {kind}): give --db the store's file (a new name makes a new "
                "store), or a postgresql:// URL") in capsys.readouterr().err
