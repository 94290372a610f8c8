"""A leaderboard store on a read-only file system (a read-only mount, a CD): the board is read from it as it is,
and publishing into it is refused in words that say why; so are a run's --out and a champollion project there. The
mount is made in a user and mount namespace of its own (``unshare``), so these tests need no privileges; where
namespaces are not allowed they are skipped."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from champollion_project import SIDES, locales_command, make_project, needs_node, pairs_config
from mt_eval.cli import main
from mt_eval.leaderboard.synthetic import write_card

UNSHARE = shutil.which("unshare")


def on_read_only_mount(directory: Path, *mt_eval: str, command: list[str] | None = None
                       ) -> subprocess.CompletedProcess[str]:
    """``mt-eval ARGS`` (or ``command``) run while ``directory`` is mounted read-only over itself (for that command
    alone)."""
    command = command or [sys.executable, "-m", "mt_eval.cli", *mt_eval]
    script = (f"mount --bind {shlex.quote(str(directory))} {shlex.quote(str(directory))} && "
              f"mount -o remount,bind,ro {shlex.quote(str(directory))} && exec {shlex.join(command)}")
    return subprocess.run([str(UNSHARE), "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MT_EVAL": str(Path(sys.executable).with_name("mt-eval"))})


@pytest.fixture
def read_only_ok(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    if UNSHARE is None:
        pytest.skip("no unshare here")
    done = subprocess.run([UNSHARE, "--user", "--map-root-user", "--mount", "sh", "-c",
                           f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && ! touch {probe}/x"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"a read-only mount cannot be made here: {done.stderr.strip()}")


@pytest.fixture
def store(tmp_path: Path, cards) -> Path:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    card = write_card(cards.card("alpha", quality=0.8), tmp_path / "cards" / "alpha.json")
    assert main(["publish", str(card), "--db", str(shelf / "board.db"), "--no-input"]) == 0
    return shelf / "board.db"


def test_the_board_is_read_from_a_store_on_a_read_only_file_system(read_only_ok, store: Path):
    done = on_read_only_mount(store.parent, "leaderboard", "--db", str(store), "--json")
    assert done.returncode == 0, done.stderr
    assert '"method_id": "alpha"' in done.stdout
    assert sorted(p.name for p in store.parent.iterdir()) == ["board.db"]  # nothing written beside it


def test_publishing_into_a_store_on_a_read_only_file_system_says_why(read_only_ok, store: Path, cards, tmp_path: Path):
    card = write_card(cards.card("beta", quality=0.7), tmp_path / "cards" / "beta.json")
    done = on_read_only_mount(store.parent, "publish", str(card), "--db", str(store), "--no-input")
    assert done.returncode == 1
    assert done.stderr == (f"mt-eval publish: cannot publish into the leaderboard store {store}: it is on a "
                           "read-only file system (copy it somewhere writable, publish there, and copy it back); "
                           "nothing was published\n")
    fresh = store.parent / "new.db"
    done = on_read_only_mount(store.parent, "publish", str(card), "--db", str(fresh), "--no-input")
    assert done.returncode == 1
    assert "it is on a read-only file system (name a store elsewhere with --db)" in done.stderr


@pytest.mark.parametrize("again", [(), ("--resume",)])
def test_a_run_out_on_a_read_only_file_system_says_to_choose_a_writable_one(read_only_ok, tmp_path: Path,
                                                                              again: tuple[str, ...]):
    """Before: "cannot write to --out …: Read-only file system", with no fix."""
    (tmp_path / "shelf" / "run").mkdir(parents=True)
    out = tmp_path / "shelf" / ("run" if again else "new")
    done = on_read_only_mount(tmp_path / "shelf", "run", "--demo", "--limit", "2", "--out", str(out), *again)
    assert done.returncode == 1
    verb = "write to" if again else "create"
    assert done.stderr == (f"mt-eval run: cannot {verb} --out {out}: it is on a file system mounted read-only; give "
                           "--out a place on a writable file system\n")


@needs_node
@pytest.mark.parametrize("side", SIDES)
def test_locales_on_a_read_only_file_system_say_so_not_chmod(read_only_ok, tmp_path: Path, side: str):
    """Before: "make it writable (chmod u+wx …)", which no chmod can do on a read-only mount."""
    project = make_project(tmp_path / "project", pairs_config({"en:es": {"methodPlugin": "reverse"}}),
                           {"locales/en/common.json": {"greeting": "Hello"}}, plugins=("reverse",))
    done = on_read_only_mount(project.root, command=locales_command(side, project))
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert (f"{project.root / 'locales' / 'es' / 'common.json'}: cannot write it: {project.root / 'locales'} is on a "
            "file system mounted read-only; put the locales on a writable file system") in said, said
    assert "chmod" not in said
