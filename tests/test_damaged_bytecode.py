"""A plugin module's cached bytecode cut short (a full disk as Python wrote it) is set aside, and said."""

from __future__ import annotations

import importlib.util
import py_compile
import shutil
from pathlib import Path

import pytest

from mt_eval.cli import main
from sandbox_support import isolation_reason

PIPELINE = '''\
import helpers


class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": helpers.PREFIX + e["source"]} for e in entries]
'''

def _damaged_plugin(make_plugin, name: str) -> tuple[Path, Path]:
    """A plugin whose helper module's .pyc is cut short; the plugin and that .pyc."""
    plugin = make_plugin(files={"pipeline.py": PIPELINE, "helpers.py": "PREFIX = ''\n"}, name=name)
    source = plugin / "helpers.py"
    cached = Path(importlib.util.cache_from_source(str(source)))
    py_compile.compile(str(source), cfile=str(cached), doraise=True)
    cached.write_bytes(cached.read_bytes()[:30])  # (its header whole, the code after it cut short)
    return plugin, cached


def test_a_cut_short_pyc_is_removed_and_the_plugin_imported_from_its_source(make_plugin, capsys):
    plugin, cached = _damaged_plugin(make_plugin, "cut-short")
    others = sorted(p.name for p in plugin.rglob("*") if p != cached)

    assert main(["validate", "--no-sandbox", "--no-scan", str(plugin)]) == 0
    err = capsys.readouterr().err
    assert (f"mt-eval: warning: the cached bytecode {cached} was damaged (cut short, e.g. by a full disk): removed "
            "it, and imported its module from the source") in err
    assert not cached.exists()
    assert set(others) <= {p.name for p in plugin.rglob("*")}  # (nothing else removed; a new cache may be written)


@pytest.mark.skipif(isolation_reason() is not None, reason=str(isolation_reason()))
def test_in_the_sandbox_a_cut_short_pyc_is_passed_over_and_its_removal_asked_for(make_plugin, capsys):
    plugin, cached = _damaged_plugin(make_plugin, "cut-short-sandboxed")

    assert main(["validate", "--no-scan", str(plugin)]) == 0  # (the directory is read-only there)
    err = capsys.readouterr().err
    assert (f"the cached bytecode {cached} was damaged (cut short, e.g. by a full disk): imported its module from "
            f"the source (it could not be removed: Read-only file system); delete it (or the {cached.parent} "
            "directory) to stop this warning") in err
    assert cached.stat().st_size == 30


def test_a_damaged_pyc_that_cannot_be_passed_over_is_named_with_its_fix(make_plugin, tmp_path: Path, capsys,
                                                                       monkeypatch):
    plugin, cached = _damaged_plugin(make_plugin, "cut-short-outside")
    elsewhere = tmp_path / "site"  # (a module the plugin imports from outside it is Python's to load)
    elsewhere.mkdir()
    shutil.move(plugin / "helpers.py", elsewhere / "helpers.py")
    shutil.move(cached.parent, elsewhere / "__pycache__")
    moved = elsewhere / "__pycache__" / cached.name
    monkeypatch.syspath_prepend(str(elsewhere))

    def refuse(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)

    assert main(["validate", "--no-sandbox", "--no-scan", str(plugin)]) == 1
    out = capsys.readouterr().out
    assert 'importing "pipeline" failed: EOFError: marshal data too short' in out
    assert (f"fix: its cached bytecode {moved} is damaged (cut short, e.g. by a full disk): delete {moved} (or the "
            f"{moved.parent} directory) and try again") in " ".join(out.split())
