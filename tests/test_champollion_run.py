"""``mt-eval run --champollion-config PATH --pair en:es``: the plugin the config names, recorded in the run card."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from champollion_project import make_project, pairs_config
from gate_policies import LENIENT
from mt_eval.champollion.lockfile import method_fingerprint
from mt_eval.cli import main

CORPUS = {"language_pair": {"source": "eng", "target": "fra"},
          "entries": [{"id": "1", "source": "Hello", "reference": "fra: Uryyb"},
                      {"id": "2", "source": "Good night", "reference": "fra: Tbbq avtug"}]}


def test_the_run_evaluates_the_pairs_plugin_and_the_card_says_so(tmp_path: Path, capsys):
    project = make_project(tmp_path, pairs_config({
        "en:es": {"methodPlugin": "upper"},
        "en->fr": {"methodPlugin": "champollion-rot13", "model": "m-2", "temperature": 0.5, "batchSize": 1,
                   "timeoutS": 30}}))
    project.write("corpus.json", CORPUS)
    out = tmp_path / "run"
    config = tmp_path / "champollion.config.json"
    status = main(["run", "--champollion-config", str(config), "--pair", "en:fr", "--corpus",
                   str(tmp_path / "corpus.json"), "--out", str(out), "--quiet", "--resamples", "10", *LENIENT])
    assert status == 0, capsys.readouterr().err
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["method"]["method_id"] == "champollion-rot13"
    assert card["corpus"]["pair"] == "eng>fra"
    assert card["covariates"]["model"] == "m-2"
    assert card["covariates"]["temperature"] == 0.5
    assert card["covariates"]["batch_size"] == 1
    assert card["covariates"]["timeout_s"] == 30  # (not the --timeout default, 120)
    assert [r["predicted"] for r in card["results"]] == ["fra: Uryyb", "fra: Tbbq avtug"]
    assert card["method"]["champollion"] == {
        "config": str(config),
        "config_sha256": hashlib.sha256(config.read_bytes()).hexdigest(),
        "pair": "en->fr",
        "source_locale": "en",
        "target_locale": "fr",
        "method_plugin": "champollion-rot13",
        "plugin_directory": ".champollion/methods/rot13",
        "languages": "eng>fra",
        "settings": {"model": "m-2", "temperature": 0.5, "batchSize": 1},
        "method_fingerprint": method_fingerprint("champollion-rot13", card["method"]["code_sha256"], "eng", "fra",
                                                 "m-2", 0.5),
    }


def test_wrong_pair_method_or_corpus_is_refused(tmp_path: Path, capsys):
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "upper"},
                                                   "en:fr": {"methodPlugin": "rot13"}}))
    project.write("corpus.json", CORPUS)
    base = ["run", "--champollion-config", str(tmp_path), "--corpus", str(tmp_path / "corpus.json"),
            "--out", str(tmp_path / "run"), "--quiet"]

    def error(*extra: str) -> str:
        assert main([*base, *extra]) == 1
        return capsys.readouterr().err

    assert "has no pair en:de; its pairs: en:es, en:fr" in error("--pair", "en:de")
    assert "has 2 pairs (en:es, en:fr); choose one, e.g. --pair en:es" in error()
    assert "the corpus is eng>fra, but the champollion pair translates eng>spa" in error("--pair", "en:es")
    with pytest.raises(SystemExit) as refused:  # (a usage error: the config names the method)
        main([*base, "--pair", "en:fr", "--method", str(tmp_path)])
    assert refused.value.code == 2
    assert "argument --method: not allowed with argument --champollion-config" in capsys.readouterr().err
    project.write("champollion.config.json", pairs_config({"en:fr": {"methodPlugin": "rot-13"}}))
    message = error("--pair", "en:fr")
    assert 'methodPlugin "rot-13" names no plugin' in message and "method_id champollion-rot13" in message
    assert not (tmp_path / "run").exists()


def test_the_pairs_timeout_replaces_an_explicit_timeout_as_the_help_says(tmp_path: Path, capsys):
    project = make_project(tmp_path, pairs_config({"en:fr": {"methodPlugin": "rot13", "timeoutS": 30}}))
    project.write("corpus.json", CORPUS)
    out = tmp_path / "run"
    status = main(["run", "--champollion-config", str(tmp_path), "--pair", "en:fr", "--corpus",
                   str(tmp_path / "corpus.json"), "--timeout", "5", "--out", str(out), "--quiet", "--resamples", "10",
                   *LENIENT])
    assert status == 0, capsys.readouterr().err
    assert json.loads((out / "card.json").read_text(encoding="utf-8"))["covariates"]["timeout_s"] == 30
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "its model, temperature, batchSize and timeoutS apply, over --model, --temperature, --batch-size and " \
           "--timeout" in shown
