"""The loader cannot be tricked into running code from outside the plugin: a `pipeline/` package (or a
symlink to ../elsewhere) beside pipeline.py, a symlinked sibling module, a submodule imported later — each
is refused naming its path, under `validate` and under `run`, and the outside code never runs."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.loader import PluginLoadError, load_method
from mt_eval.records import RunConfig
from mt_eval.validate import validate_plugin

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks")
CONFIG = RunConfig(source_lang="eng", target_lang="spa")


def outside_code(tmp_path: Path, name: str = "elsewhere") -> tuple[Path, Path]:
    """A directory outside any plugin whose code, if it ever ran, would leave a marker file."""
    elsewhere = tmp_path / name
    elsewhere.mkdir()
    marker = tmp_path / f"{name}-ran"
    code = textwrap.dedent(f'''
        open({str(marker)!r}, "w").write("ran")
        WORD = "outside"

        class EchoMethod:
            async def translate(self, entries, config):
                return [{{"id": e["id"], "predicted": "outside"}} for e in entries]
    ''')
    (elsewhere / "__init__.py").write_text(code)
    (elsewhere / "helpers.py").write_text(code)
    return elsewhere, marker


def test_a_symlinked_pipeline_package_beside_pipeline_py_is_refused_under_validate(make_plugin, tmp_path: Path):
    elsewhere, marker = outside_code(tmp_path)
    plugin = make_plugin()
    (plugin / "pipeline").symlink_to(elsewhere, target_is_directory=True)
    report = validate_plugin(plugin)
    problem = next(p for p in report.errors if p.path == "$.entry_point")
    assert str(plugin / "pipeline") in problem.message and str(elsewhere) in problem.message
    assert "outside the plugin directory" in problem.message
    assert not marker.exists()


def test_the_same_plugin_is_refused_by_run(make_plugin, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    elsewhere, marker = outside_code(tmp_path)
    plugin = make_plugin()
    (plugin / "pipeline").symlink_to(elsewhere, target_is_directory=True)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "1", "source": "a", "reference": "a"}) + "\n")
    code = main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "eng>spa",
                 "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert f"{plugin / 'pipeline'}, which resolves to {elsewhere}" in err
    assert not marker.exists()


def test_a_pipeline_package_inside_the_plugin_still_wins_as_python_decides(make_plugin):
    plugin = make_plugin(files={"pipeline/__init__.py": "class EchoMethod:\n"
                                "    async def translate(self, entries, config):\n"
                                "        return [{'id': e['id'], 'predicted': 'package'} for e in entries]\n"})
    assert load_method(plugin).module.__file__.endswith("pipeline/__init__.py")  # type: ignore[union-attr]


def test_a_symlinked_sibling_module_imported_by_the_entry_is_refused(make_plugin, tmp_path: Path):
    elsewhere, marker = outside_code(tmp_path)
    plugin = make_plugin(files={"pipeline.py": "from helpers import WORD\n\nclass EchoMethod:\n"
                                "    async def translate(self, entries, config):\n        return []\n"})
    (plugin / "helpers.py").symlink_to(elsewhere / "helpers.py")
    with pytest.raises(PluginLoadError) as caught:
        load_method(plugin)
    assert f'module "helpers" resolves to {elsewhere / "helpers.py"}' in str(caught.value)
    assert not marker.exists()


async def test_a_submodule_imported_later_from_the_private_package_is_refused(make_plugin, tmp_path: Path):
    elsewhere, marker = outside_code(tmp_path)
    plugin = make_plugin(files={
        "pipeline.py": "class EchoMethod:\n"
                       "    async def translate(self, entries, config):\n"
                       "        from .parts import helpers\n"
                       "        return [{'id': e['id'], 'predicted': helpers.WORD} for e in entries]\n",
        "parts/__init__.py": ""})
    (plugin / "parts" / "helpers.py").symlink_to(elsewhere / "helpers.py")
    loaded = load_method(plugin)
    with pytest.raises(ImportError, match="outside the plugin directory"):
        await loaded.method.translate([{"id": "1", "source": "a"}], CONFIG)
    assert not marker.exists()


def test_a_dotted_entry_through_a_symlinked_package_is_refused(make_plugin, tmp_path: Path):
    elsewhere, marker = outside_code(tmp_path)
    plugin = make_plugin({"name": "M", "entry_point": "lib.helpers:EchoMethod", "dependencies": []})
    (plugin / "lib").symlink_to(elsewhere, target_is_directory=True)
    report = validate_plugin(plugin)
    assert any(f'module "lib" is {plugin / "lib"}' in p.message for p in report.errors)
    assert not marker.exists()
