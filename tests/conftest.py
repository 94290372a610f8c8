from __future__ import annotations

import json
import os
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
collect_ignore = ["journeys"]  # the README's journeys: nox -s journeys runs them, from a fresh copy
REPO = Path(__file__).parent.parent

GOOD_METHOD = '''
class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
'''

MakePlugin = Callable[..., Path]


@pytest.fixture
def make_plugin(tmp_path: Path) -> MakePlugin:
    """Write a plugin directory: ``manifest`` (dict, or raw text) plus ``files`` (name → text)."""
    counter = iter(range(1000))

    def make(manifest: dict[str, Any] | str | None = None, files: dict[str, str] | None = None,
             name: str | None = None, card: dict[str, Any] | str | None = None) -> Path:
        directory = tmp_path / (name or f"plugin-{next(counter)}")
        directory.mkdir(parents=True)
        if manifest is None:
            manifest = {"name": "Echo", "entry_point": "pipeline:EchoMethod", "dependency_class": "S",
                        "dependencies": []}
        text = manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2)
        (directory / "method.json").write_text(text, encoding="utf-8")
        if card is not None:
            card_text = card if isinstance(card, str) else json.dumps(card, indent=2)
            (directory / "method_card.json").write_text(card_text, encoding="utf-8")
        all_files = {"pipeline.py": GOOD_METHOD, **(files or {})}
        for rel, content in all_files.items():
            path = directory / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(content), encoding="utf-8")
        return directory

    return make


@pytest.fixture
def seed_plugin(tmp_path: Path) -> Path:
    """A writable copy of the seed's fst-gated-v8 plugin."""
    target = tmp_path / "fst-gated-v8"
    shutil.copytree(FIXTURES / "fst-gated-v8", target)
    return target


def messages(problems: Any) -> list[str]:
    return [f"{p.path}: {p.message}" for p in problems]


@pytest.fixture(scope="session")
def postgres_cluster():
    """A PostgreSQL server of the tests' own (skipped where PostgreSQL is not installed, unless
    $MT_EVAL_REQUIRE_POSTGRES is set, as CI does)."""
    from postgres_server import Cluster, find_bindir

    bindir = find_bindir()
    if bindir is None:
        reason = "PostgreSQL is not installed (Debian: apt-get install postgresql)"
        if os.environ.get("MT_EVAL_REQUIRE_POSTGRES"):
            pytest.fail(reason)
        pytest.skip(reason)
    cluster = Cluster(bindir)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path: Path) -> str:
    """A new, empty store of each backend: a SQLite file, or a database on the tests' PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "board.db")
    return request.getfixturevalue("postgres_cluster").database()


@pytest.fixture
def cards(tmp_path: Path):
    """A `CardFactory` on a 20-entry corpus written under tmp_path."""
    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    return CardFactory(write_corpus(tmp_path / "corpus.json", name="synthetic"), resamples=100)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    """A demo run's card (`mt-eval run --demo`), made once per test module: what the grading tests grade."""
    from mt_eval.cli import main

    out = tmp_path_factory.mktemp("demo") / "run"
    assert main(["run", "--demo", "--out", str(out), "--quiet", "--resamples", "50"]) == 0
    return out / "card.json"
