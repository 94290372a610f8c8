"""The SDK installed from its wheel, outside the source tree: the wheel carries what ships beside the code (the
Node package, the plugin template, the conformance transcripts, the demo) and `mt_eval.resources` finds it there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from mt_eval.resources import resource

REPO = Path(__file__).parent.parent
TEMPLATE = REPO / "templates" / "method-plugin"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(out)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return next(out.glob("*.whl"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment outside the checkout with the wheel installed in it; the SDK's dependencies
    come from this environment's site-packages (a .pth line), so nothing is downloaded."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], check=True, timeout=300)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "dependencies-of-the-tests.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv


def clean_env(venv: Path) -> dict[str, str]:
    """No PYTHONPATH and no variable pointing at the checkout: only the installed SDK can be imported."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MT_EVAL", "VIRTUAL_ENV"))}
    return {**keep, "PATH": f"{venv / 'bin'}:/usr/bin:/bin"}


def test_the_wheel_ships_the_template_the_demo_and_the_node_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    template = {str(p.relative_to(TEMPLATE.parent)) for p in TEMPLATE.rglob("*") if p.is_file()}
    assert {f"mt_eval/templates/{name}" for name in template} <= names
    assert {"mt_eval/demo/lexicon-eng-spa/method.json", "mt_eval/demo/lexicon-eng-spa/pipeline.py",
            "mt_eval/demo/data/eng-spa-demo.json", "mt_eval/bridge/node/bin/mt-eval-guest.js",
            "mt_eval/bridge/node/lib/generated/schemas/run-config.json",
            "mt_eval/bridge/node/lib/generated/defaults.json"} <= names
    assert any(n.startswith("mt_eval/bridge/vectors/") and n.endswith(".json") for n in names)
    assert "mt_eval/py.typed" in names  # (PEP 561: a user's type checker reads the SDK's annotations)
    assert not any("__pycache__" in n for n in names)


def test_mt_eval_run_demo_works_from_the_installed_wheel(installed, tmp_path):
    where = subprocess.run([str(installed / "bin" / "python"), "-c", "import mt_eval; print(mt_eval.__file__)"],
                           capture_output=True, text=True, env=clean_env(installed), cwd=tmp_path, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed)  # not the source tree
    run = subprocess.run([str(installed / "bin" / "mt-eval"), "run", "--demo", "--out", "demo", "--quiet"],
                         capture_output=True, text=True, timeout=300, env=clean_env(installed), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    card = json.loads((tmp_path / "demo" / "card.json").read_text(encoding="utf-8"))
    assert card["status"] == "complete" and card["metrics"] is not None
    assert card["method"]["method_id"] == "lexicon-eng-spa"
    assert Path(card["corpus"]["path"]).is_relative_to(installed)  # the packaged demo corpus


def test_the_packaged_template_is_used_by_mt_eval_new(installed, tmp_path):
    code = "from mt_eval.scaffold import template_directory; print(template_directory())"
    where = subprocess.run([str(installed / "bin" / "python"), "-c", code], capture_output=True, text=True,
                           env=clean_env(installed), cwd=tmp_path, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed)
    made = subprocess.run([str(installed / "bin" / "mt-eval"), "new", "made", "--no-input"], capture_output=True,
                          text=True, timeout=120, env=clean_env(installed), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "made" / "method.json").is_file()
    assert not list((tmp_path / "made").rglob("__pycache__"))  # compiled template files are not copied


def test_in_the_source_tree_the_checkouts_files_are_used():
    assert resource("templates", "method-plugin") == TEMPLATE
    assert resource("demo", "lexicon-eng-spa") == REPO / "examples" / "lexicon-eng-spa"
    assert resource("node", "bin", "mt-eval-guest.js") == REPO / "bridge" / "node" / "bin" / "mt-eval-guest.js"
    assert resource("conformance") == REPO / "bridge" / "vectors" / "conformance"
