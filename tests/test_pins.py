"""Pins are checked before a run: a vendored artifact's SHA-256, an installed package's version; a mismatch is
refused with what differs and the fix, and the run card records every check."""

from __future__ import annotations

import json
import shutil
from importlib.metadata import version
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard
from mt_eval.loader import read_plugin
from mt_eval.pins import _deb_forms, check_pins

SPEC_EXAMPLE = Path(__file__).parent / "fixtures" / "crk-coached-v1"


def spec_plugin(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SPEC_EXAMPLE, tmp_path / "crk-coached-v1"))


def run(tmp_path: Path, plugin: Path) -> tuple[int, RunCard | None]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "1", "source": "Hello dog.", "reference": "tânisi atim"}) + "\n")
    code = main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "eng>crk", "--quiet",
                 "--out", str(tmp_path / "run"), "--resamples", "20", *LENIENT])
    path = tmp_path / "run" / "card.json"
    return code, msgspec.json.decode(path.read_bytes(), type=RunCard) if path.exists() else None


def with_dependency(plugin: Path, **fields: object) -> Path:
    manifest = json.loads((plugin / "method.json").read_text())
    manifest["dependencies"].append({"id": "extra", "kind": "software", "license": "MIT", "access": "mirrored",
                                     "redistributable": True, "transferable": True, **fields})
    (plugin / "method.json").write_text(json.dumps(manifest))
    return plugin


def test_the_spec_example_runs_with_its_vendored_artifact_verified(tmp_path: Path):
    code, card = run(tmp_path, spec_plugin(tmp_path))
    assert code == 0 and card is not None
    [check] = card.pins
    assert (check.id, check.status, check.checked) == ("crk-fst", "verified", "file fst/crk-analyser.att")
    assert check.found == check.pin
    assert card.results[0].predicted == "tânisi atim"


def test_a_changed_vendored_artifact_refuses_the_run(tmp_path: Path, capsys):
    plugin = spec_plugin(tmp_path)
    (plugin / "fst" / "crk-analyser.att").write_text("0\t1\tx\tx\n1\n")
    code, card = run(tmp_path, plugin)
    assert code == 1 and card is None
    err = capsys.readouterr().err
    assert "pinned dependencies differ from what this run would use" in err
    assert "crk-fst: pins sha256:911fbb1e" in err and "but file fst/crk-analyser.att is sha256:" in err
    assert "fix: restore the pinned copy, or review this one and update the pin" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_pin_written_in_capitals_is_checked_all_the_same(tmp_path: Path, capsys):
    plugin = spec_plugin(tmp_path)
    manifest = json.loads((plugin / "method.json").read_text())
    fst = next(d for d in manifest["dependencies"] if d["id"] == "crk-fst")
    fst["pin"] = fst["pin"].replace("sha256:", "SHA256:")
    (plugin / "method.json").write_text(json.dumps(manifest))
    _, card = run(tmp_path, plugin)
    assert card is not None and {p.id: p.status for p in card.pins}["crk-fst"] == "verified"
    (plugin / "fst" / "crk-analyser.att").write_text("0\t1\tx\tx\n1\n")
    (tmp_path / "changed").mkdir()
    assert run(tmp_path / "changed", plugin) == (1, None)
    assert "crk-fst: pins SHA256:911fbb1e" in capsys.readouterr().err
    fst["pin"] = "SHA256:911fbb1e"  # (a short one is no SHA-256 pin, whatever its case)
    (plugin / "method.json").write_text(json.dumps(manifest))
    assert [p.code for p in read_plugin(plugin)[1] if p.severity == "error"] == ["pin-format"]


def test_a_missing_vendored_artifact_refuses_the_run(tmp_path: Path, capsys):
    plugin = spec_plugin(tmp_path)
    (plugin / "fst" / "crk-analyser.att").unlink()
    assert run(tmp_path, plugin) == (1, None)
    assert "but file fst/crk-analyser.att does not exist" in capsys.readouterr().err


def test_installed_python_packages_are_checked(tmp_path: Path, capsys):
    installed = version("msgspec")
    plugin = with_dependency(spec_plugin(tmp_path), source="pypi:msgspec", pin=installed)
    source, _ = read_plugin(plugin)
    assert [c.status for c in check_pins(source)] == ["verified", "verified"]
    with_dependency(plugin, id="older", source="pypi:msgspec", pin="0.0.1")
    assert run(tmp_path, plugin) == (1, None)
    assert f"older: pins 0.0.1, but the installed Python package msgspec is {installed}; fix: pip install " \
           f"msgspec==0.0.1, or review {installed} and update the pin" in capsys.readouterr().err


def test_npm_packages_are_looked_up_from_the_plugin_directory(tmp_path: Path):
    plugin = with_dependency(spec_plugin(tmp_path), source="npm:left-pad", pin="1.3.0")
    (tmp_path / "node_modules" / "left-pad").mkdir(parents=True)
    (tmp_path / "node_modules" / "left-pad" / "package.json").write_text('{"version": "1.3.0"}')
    source, _ = read_plugin(plugin)
    assert check_pins(source)[1].status == "verified"
    (tmp_path / "node_modules" / "left-pad" / "package.json").write_text('{"version": "1.1.0"}')
    assert check_pins(source)[1].status == "mismatch"
    shutil.rmtree(tmp_path / "node_modules")
    assert check_pins(source)[1].status == "missing"


def test_debian_packages_and_pins_that_cannot_be_checked(tmp_path: Path):
    plugin = with_dependency(spec_plugin(tmp_path), source="deb:no-such-package-xyz", pin="1.0")
    with_dependency(plugin, id="remote", source="https://example.org/model.bin", pin="sha256:" + "0" * 64)
    with_dependency(plugin, id="prose", source="your mirror's copy", pin="2024-01-01")
    source, _ = read_plugin(plugin)
    checks = {c.id: c.status for c in check_pins(source)}
    assert checks["extra"] == ("missing" if shutil.which("dpkg-query") else "unverifiable")
    assert checks["remote"] == checks["prose"] == "unverifiable"


def test_a_pin_may_name_any_debian_revision_of_an_upstream_version():
    assert {"1:3.8.3-1+b2", "3.8.3-1+b2", "3.8.3-1", "3.8.3"} == _deb_forms("1:3.8.3-1+b2")


@pytest.mark.skipif(not shutil.which("dpkg-query"), reason="dpkg-query is not installed")
def test_the_apertium_example_pins_match_what_debian_installed():
    source, _ = read_plugin(Path(__file__).parent.parent / "examples" / "apertium-eng-spa")
    checks = check_pins(source)
    if any(c.status == "missing" for c in checks):
        pytest.skip("apertium-eng-spa is not installed")
    assert {c.status for c in checks} == {"verified"}
