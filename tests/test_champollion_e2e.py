"""examples/champollion-project end to end: the Node command (mt-eval-locales) and the Python command
(mt-eval locales) write byte-identical files; a second run sends nothing; one changed source string is the
only key sent again; placeholders survive; a misspelled methodPlugin fails listing the plugins; and
``mt-eval run --champollion-config`` evaluates the very plugin the config names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate_policies import LENIENT
from mt_eval.champollion.config import read_config
from mt_eval.champollion.placeholders import protect
from mt_eval.champollion.plugins import resolve_plugin

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "champollion-project"
NODE_CLI = REPO / "bridge" / "node" / "bin" / "mt-eval-locales.js"
MT_EVAL = Path(sys.executable).parent / "mt-eval"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node (>= 20) is not installed")


def runnable_locales() -> list[str]:
    """Target locales whose plugin can run here: an Apertium-backed one needs the apertium program."""
    config = read_config(EXAMPLE)
    found = []
    for pair in config.pairs:
        directory = resolve_plugin(pair.settings.method_plugin, config.directory).resolve()
        if "apertium" in directory.name and shutil.which("apertium") is None:
            continue
        found.append(pair.target)
    return found


LOCALES = runnable_locales()
if not LOCALES:
    pytestmark = pytest.mark.skip(reason="apertium is not installed (apt-get install apertium apertium-eng-spa), and "
                                         "every pair of examples/champollion-project needs it")


def copy_project(target: Path) -> Path:
    """A copy of the example with only its English files, its plugin links pointing at the originals."""
    shutil.copytree(EXAMPLE, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    for child in (target / "locales").iterdir():
        if child.name != "en":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    methods = target / ".champollion" / "methods"
    for link in methods.iterdir():
        if link.is_symlink():
            original = (EXAMPLE / ".champollion" / "methods" / link.name).resolve()
            link.unlink()
            link.symlink_to(original, target_is_directory=True)
    return target


def node_cli(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MT_EVAL": str(MT_EVAL)}
    return subprocess.run([NODE or "node", str(NODE_CLI), "--config", str(project), "--quiet", *argv], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def python_cli(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MT_EVAL), "locales", "--config", str(project), "--quiet", *argv],
                          capture_output=True, text=True, timeout=120, check=False)


def both(a: Path, b: Path, *argv: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the Node command on project a and the Python command on project b; their JSON reports."""
    locales = [arg for locale in LOCALES for arg in ("--locale", locale)]
    node, python = node_cli(a, "--json", *locales, *argv), python_cli(b, "--json", *locales, *argv)
    assert node.returncode == 0, node.stderr + node.stdout
    assert python.returncode == 0, python.stderr + python.stdout
    return json.loads(node.stdout), json.loads(python.stdout)


def files(project: Path) -> dict[str, bytes]:
    """Every file the commands write (target locales and the lock file), by path."""
    root = project / "locales"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] != "en"}


def targets(project: Path) -> dict[str, Any]:
    return {name: json.loads(data) for name, data in files(project).items() if not name.startswith(".")}


def flat(tree: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(tree, dict):
        return {k: v for key, item in tree.items() for k, v in flat(item, f"{prefix}{key}.").items()}
    return {prefix[:-1]: tree} if isinstance(tree, str) else {}


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any], dict[str, Any]]:
    """Both projects after a first run of each command."""
    a = copy_project(tmp_path_factory.mktemp("node") / "project")
    b = copy_project(tmp_path_factory.mktemp("python") / "project")
    node, python = both(a, b)
    return a, b, node, python


def test_node_and_python_write_identical_files(projects):
    a, b, node, python = projects
    assert node == python
    written = files(a)
    assert written == files(b)
    assert ".champollion-lock.json" in written
    for locale in LOCALES:
        assert any(name.startswith(f"{locale}/") for name in written), f"nothing written for {locale}"
    assert all(r["sent"] > 0 for r in node["locales"])
    assert node["ok"] is True


def test_placeholders_survive(projects):
    a, _, _, _ = projects
    english = {name: flat(json.loads((a / "locales" / "en" / name).read_text(encoding="utf-8")))
               for name in ("common.json", "recipes.json")}
    checked = 0
    for name, tree in targets(a).items():
        source = english[name.split("/", 1)[1]]
        for key, value in flat(tree).items():
            base = key.rsplit("_", 1)[0] if key.rsplit("_", 1)[-1] in ("zero", "one", "two", "few", "many") else key
            original = source.get(key) or source.get(f"{base}_other")
            assert original is not None, f"{name} {key} has no source"
            assert sorted(protect(value).placeholders) == sorted(protect(original).placeholders), (name, key, value)
            checked += bool(protect(original).placeholders)
    assert checked >= 6 * len(LOCALES)
    if "es" in LOCALES:
        recipes = json.loads((a / "locales" / "es" / "recipes.json").read_text(encoding="utf-8"))
        assert "<0>" in recipes["terms"] and "</1>" in recipes["terms"]
        assert "%s" in recipes["deleted"] and "{date}" in recipes["updated"]
        assert list(recipes)[:3] == ["count_one", "count_many", "count_other"]  # Spanish plural categories


def test_a_second_run_sends_nothing(projects):
    a, b, _, _ = projects
    before = files(a)
    node, python = both(a, b)
    assert node == python
    for report in node["locales"]:
        assert (report["sent"], report["calls"]) == (0, 0)
        assert all(not f["due"] and not f["written"] for f in report["files"])
    assert files(a) == before == files(b)


def test_changing_one_source_string_sends_exactly_that_key(projects):
    a, b, _, _ = projects
    before = targets(a)
    for project in (a, b):
        path = project / "locales" / "en" / "common.json"
        path.write_text(path.read_text(encoding="utf-8").replace('"Search"', '"Find a recipe"'), encoding="utf-8")
    node, python = both(a, b)
    assert node == python
    for report in node["locales"]:
        assert report["sent"] == 1
        changed = [(f["file"], f["due"], f["translated"]) for f in report["files"] if f["due"]]
        assert changed == [(f"{report['locale']}/common.json", [{"key": "nav.search", "reason": "source changed"}],
                            ["nav.search"])]
    after = targets(a)
    assert files(a) == files(b)
    for name, tree in after.items():
        differences = {k for k in flat(tree) if flat(tree)[k] != flat(before[name]).get(k)}
        assert differences == ({"nav.search"} if name.endswith("/common.json") else set()), name


def test_a_misspelled_method_plugin_fails_listing_the_plugins(tmp_path: Path):
    project = copy_project(tmp_path / "project")
    config = project / "champollion.config.json"
    config.write_text(config.read_text(encoding="utf-8").replace('"apertium-eng-spa"', '"apertium-en-es"'),
                      encoding="utf-8")
    available = sorted(p.name for p in (project / ".champollion" / "methods").iterdir())
    for result, prefix in ((node_cli(project), "mt-eval-locales"), (python_cli(project), "mt-eval locales")):
        assert result.returncode == 1
        assert result.stderr.startswith(f'{prefix}: pair "en:es": methodPlugin "apertium-en-es" names no plugin in ')
        assert "Available plugins:" in result.stderr
        for name in available:
            assert f"in .champollion/methods/{name}" in result.stderr
    assert not (project / "locales" / "es").exists()


@pytest.mark.parametrize("pair", [p.key for p in read_config(EXAMPLE).pairs])
def test_mt_eval_run_evaluates_the_plugin_the_config_names(pair: str, tmp_path: Path):
    config = read_config(EXAMPLE)
    chosen = config.pair(pair)
    if chosen.target not in LOCALES:
        pytest.skip(f"the {pair} pair cannot run here (apertium is not installed)")
    directory = resolve_plugin(chosen.settings.method_plugin, config.directory)
    out = tmp_path / "run"
    done = subprocess.run([str(MT_EVAL), "run", "--champollion-config", str(EXAMPLE / "champollion.config.json"),
                           "--pair", pair, "--corpus", str(REPO / "examples" / "data" / "eng-spa-demo.json"),
                           "--limit", "5", "--resamples", "10", "--out", str(out), "--quiet", *LENIENT],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    manifest = json.loads((directory / "method.json").read_text(encoding="utf-8"))
    assert card["method"]["method_id"] == manifest["method_id"]
    assert card["corpus"]["pair"] == "eng>spa"
    assert card["errors"] == 0
    source = card["method"]["champollion"]
    assert (source["pair"], source["method_plugin"], source["plugin_directory"]) == (
        pair, chosen.settings.method_plugin, f".champollion/methods/{directory.name}")
    assert card["covariates"]["batch_size"] == chosen.settings.batch_size
