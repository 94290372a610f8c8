"""champollion as the spec writes it: the spec's verbatim config works on both sides (inputLocale from the pair key),
and the lock file's method fingerprint covers the plugin's code, so editing the method re-sends what it translated —
from Python and from Node — and the evaluation card's fingerprint is the one the lock file records."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from champollion_project import make_project, pairs_config
from gate_policies import LENIENT
from mt_eval.cli import main

REPO = Path(__file__).parent.parent
NODE_CLI = REPO / "bridge" / "node" / "bin" / "mt-eval-locales.js"
MT_EVAL = Path(sys.executable).parent / "mt-eval"
SPEC_EXAMPLE = REPO / "tests" / "fixtures" / "crk-coached-v1"
SOURCE = {"greeting": "Hello", "pet": "dog", "thanks": "Thank you"}


def python_locales(root: Path, *argv: str) -> tuple[int, dict]:
    done = subprocess.run([str(MT_EVAL), "locales", "--config", str(root), "--json", "--quiet", *argv],
                          capture_output=True, text=True, timeout=120)
    return done.returncode, json.loads(done.stdout) if done.stdout else {"stderr": done.stderr}


def node_locales(root: Path, *argv: str) -> tuple[int, dict]:
    done = subprocess.run(["node", str(NODE_CLI), "--config", str(root), "--json", "--quiet", *argv],
                          capture_output=True, text=True, timeout=120, env={"MT_EVAL": str(MT_EVAL),
                                                                            "PATH": "/usr/local/bin:/usr/bin:/bin"})
    return done.returncode, json.loads(done.stdout) if done.stdout else {"stderr": done.stderr}


RUNNERS = [pytest.param(python_locales, id="python"),
           pytest.param(node_locales, id="node", marks=pytest.mark.skipif(shutil.which("node") is None,
                                                                           reason="node is not installed"))]


def spec_project(root: Path) -> Path:
    (root / ".champollion" / "methods").mkdir(parents=True)
    shutil.copytree(SPEC_EXAMPLE, root / ".champollion" / "methods" / "crk-coached-v1")
    (root / "champollion.config.json").write_text('{"version": 3, "pairs": {"en:crk": {"methodPlugin": '
                                                  '"crk-coached-v1"}}}\n')
    (root / "locales" / "en").mkdir(parents=True)
    (root / "locales" / "en" / "app.json").write_text(json.dumps(SOURCE))
    return root


@pytest.mark.parametrize("locales", RUNNERS)
def test_the_spec_config_verbatim_translates_from_the_pair_keys_source(tmp_path: Path, locales):
    root = spec_project(tmp_path)
    status, report = locales(root)
    assert status == 0, report
    assert report["locales"][0]["languages"] == "eng>crk"
    assert json.loads((root / "locales" / "crk" / "app.json").read_text()) == {
        "greeting": "tânisi", "pet": "atim", "thanks": "kinanâskomitin"}


@pytest.mark.parametrize("locales", RUNNERS)
def test_editing_the_plugins_code_sends_its_translations_again(tmp_path: Path, locales):
    root = spec_project(tmp_path)
    assert locales(root)[0] == 0
    assert locales(root)[1]["locales"][0]["sent"] == 0  # nothing changed: nothing sent
    plugin = root / ".champollion" / "methods" / "crk-coached-v1"
    (plugin / "pipeline.py").write_text((plugin / "pipeline.py").read_text().replace('" ".join', '"  ".join'))
    status, report = locales(root)
    assert status == 0 and report["locales"][0]["sent"] == 3  # the method changed: every key sent again


def test_the_evaluation_card_records_the_fingerprint_the_lock_file_uses(tmp_path: Path):
    root = spec_project(tmp_path)
    assert python_locales(root)[0] == 0
    lock = json.loads((root / "locales" / ".champollion-lock.json").read_text())
    [fingerprint] = {entry.split(" ")[1] for entry in lock["files"]["crk/app.json"].values()}
    (root / "corpus.jsonl").write_text(json.dumps({"id": "1", "source": "Hello dog", "reference": "tânisi atim"}))
    assert main(["run", "--champollion-config", str(root), "--pair", "en:crk", "--corpus", str(root / "corpus.jsonl"),
                 "--out", str(tmp_path / "run"), "--quiet", "--resamples", "10", *LENIENT]) == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert card["method"]["champollion"]["method_fingerprint"] == fingerprint


def test_pairs_from_different_sources_need_input_locale(tmp_path: Path, capsys):
    make_project(tmp_path, {"version": 3, "pairs": {"en:es": {"methodPlugin": "upper"},
                                                    "fr:es": {"methodPlugin": "upper"}}})
    assert main(["locales", "--config", str(tmp_path), "--quiet"]) == 1
    assert "$.inputLocale: no inputLocale, and the pairs translate from en, fr" in capsys.readouterr().err
    assert pairs_config  # the helper the other tests use keeps inputLocale explicit


def test_a_config_that_cannot_be_read_is_named_with_the_option_that_gives_it(tmp_path: Path, capsys):
    missing = tmp_path / "nowhere" / "champollion.config.json"
    assert main(["run", "--champollion-config", str(missing), "--corpus", str(tmp_path / "c.jsonl"), "--quiet"]) != 0
    assert "give the path of champollion.config.json with --champollion-config" in capsys.readouterr().err
    assert main(["locales", "--config", str(missing), "--quiet"]) == 1
    assert "give the path of champollion.config.json with --config" in capsys.readouterr().err
