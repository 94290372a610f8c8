"""Dependency classes are derived exactly as the table in mt_eval.dependency_classes says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.dependency_classes import derive, most_restrictive
from mt_eval.manifest import Dependency
from mt_eval.validate import validate_plugin


def make(**fields) -> Dependency:
    return Dependency(**{"id": "d", "kind": "data", "license": "MIT", "access": "bundled", **fields})


@pytest.mark.parametrize(("fields", "expected", "reason"), [
    ({}, "S", "bundled, MIT lets it travel with the method"),
    ({"license": "CC0-1.0", "redistributable": True}, "S", "lets it travel"),
    ({"license": "proprietary", "transferable": True}, "S", "lets it travel"),
    ({"license": "CC-BY-NC-4.0"}, "X", "does not let others redistribute it"),
    ({"license": "MIT", "redistributable": False}, "X", "does not let others redistribute it"),
    ({"license": "proprietary"}, "X", "does not let others redistribute it"),
    ({"license": "none"}, "X", "bundled without a licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "GPL-2.0-or-later"}, "O", "mirrored, open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "AGPL-3.0-only"}, "O", "mirrored, open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "CC-BY-SA-4.0"}, "O", "mirrored, open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "proprietary"}, "X", "is not an open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "CC-BY-NC-4.0"}, "X", "is not an open licence"),
    ({"access": "gateway", "substitutable": True, "license": "proprietary"}, "A1", "gateway, substitutable"),
    ({"access": "gateway", "substitutable": False, "license": "proprietary"}, "A2", "gateway, not substitutable"),
    ({"access": "external-api", "substitutable": True, "license": "none"}, "A2", "external API"),
])
def test_each_dependency_contributes_its_class(fields, expected, reason):
    derivation = derive([make(**fields)])
    [contribution] = derivation.contributions
    assert contribution.dependency_class == expected
    assert reason in contribution.reason
    assert derivation.dependency_class == expected


def test_method_class_is_the_most_restrictive():
    assert most_restrictive(["S", "A1", "O"]) == "A1"
    assert most_restrictive(["X", "A2"]) == "X"
    assert most_restrictive([]) == "S"


def test_empty_list_is_s_and_missing_list_is_undeclared():
    assert derive([]).dependency_class == "S"
    assert derive(None).dependency_class is None
    assert "undeclared" in derive(None).explain()


def test_seed_manifest_derives_a2(seed_plugin: Path):
    report = validate_plugin(seed_plugin)
    assert report.passed(strict=True), [p.render() for p in report.problems]
    assert report.derived_class == "A2"
    assert [(c["path"], c["class"]) for c in report.contributions] == [
        ("$.dependencies[0]", "O"), ("$.dependencies[1]", "A1"), ("$.dependencies[2]", "A2")]


def declare(plugin: Path, dependency_class: str) -> Path:
    manifest_path = plugin / "method.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["dependency_class"] = dependency_class
    manifest_path.write_text(json.dumps(manifest))
    return plugin


def test_seed_manifest_declaring_s_names_every_offending_dependency(seed_plugin: Path):
    [problem] = validate_plugin(declare(seed_plugin, "S")).errors
    assert problem.path == "$.dependency_class"
    assert problem.message.startswith('declared "S" but the dependencies make it "A2"')
    for path, cls in [("$.dependencies[0] (crk-fst)", "O"), ("$.dependencies[1] (llm-gateway)", "A1"),
                      ("$.dependencies[2] (online-dictionary)", "A2")]:
        assert f"{path} contributes {cls}" in problem.message
    assert problem.hint == 'set "dependency_class": "A2", or change the dependencies listed'


def test_declaring_o_names_only_the_dependencies_above_o(seed_plugin: Path):
    [problem] = validate_plugin(declare(seed_plugin, "O")).errors
    assert "$.dependencies[0]" not in problem.message
    assert "$.dependencies[1] (llm-gateway) contributes A1" in problem.message


def test_constructing_an_invalid_dependency_in_code_raises():
    with pytest.raises(ValueError, match='a "mirrored" dependency needs "pin"'):
        make(access="mirrored")
