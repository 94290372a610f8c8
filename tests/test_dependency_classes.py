"""Dependency classes are derived exactly as the table in mt_eval.dependency_classes says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.dependency_classes import derive, most_restrictive
from mt_eval.manifest import Dependency
from mt_eval.validate import validate_plugin


def make(**fields) -> Dependency:
    return Dependency(**{"id": "d", "kind": "data", "license": "MIT", "access": "bundled", "source": "d.tsv",
                         "redistributable": True, "transferable": True, **fields})


# The full access × licence × flag matrix is bridge/vectors/contract/dependency-matrix.json
# (tests/test_contract_vectors.py); these are the rules the issue names, spelled out.
@pytest.mark.parametrize(("fields", "expected", "reason"), [
    ({}, "S", "bundled, MIT lets it be redistributed and transferred with the method"),
    ({"transferable": False}, "X", "bundled, but not transferable"),
    ({"redistributable": False}, "X", "bundled, but not redistributable"),
    ({"license": "proprietary", "redistributable": False, "transferable": True}, "X", "but not redistributable"),
    ({"license": "CC-BY-NC-4.0", "redistributable": False}, "X", "bundled, but not redistributable"),
    ({"license": "none", "redistributable": False, "transferable": False}, "X", "bundled without a licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "GPL-2.0-or-later"}, "O", "mirrored, open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "AGPL-3.0-only"}, "O", "mirrored, open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "CC-BY-SA-4.0"}, "O", "mirrored, open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "MIT", "redistributable": False}, "X",
     "mirrored, but not redistributable: no one else can obtain the pinned copy"),
    ({"access": "mirrored", "pin": "1.0", "license": "proprietary", "redistributable": False}, "X",
     "is not an open licence"),
    ({"access": "mirrored", "pin": "1.0", "license": "CC-BY-NC-4.0", "redistributable": False}, "X",
     "is not an open licence"),
    ({"access": "gateway", "substitutable": True, "license": "proprietary", "redistributable": False}, "A1",
     "gateway, substitutable"),
    ({"access": "gateway", "substitutable": False, "license": "proprietary", "redistributable": False}, "A2",
     "gateway, not substitutable"),
    ({"access": "external-api", "substitutable": True, "license": "none", "redistributable": False,
      "transferable": False}, "A2", "external API"),
    ({"access": "external-api", "license": "MIT"}, "A2", "external API"),
])
def test_each_dependency_contributes_its_class(fields, expected, reason):
    derivation = derive([make(**fields)])
    [contribution] = derivation.contributions
    assert contribution.dependency_class == expected
    assert reason in contribution.reason
    assert derivation.dependency_class == expected


@pytest.mark.parametrize(("fields", "message"), [
    ({"license": "proprietary", "redistributable": True}, '"redistributable": true contradicts licence "proprietary"'),
    ({"license": "CC-BY-NC-4.0"}, "a non-commercial licence does not let everyone redistribute it"),
    ({"license": "CC-BY-ND-4.0", "access": "mirrored", "pin": "1"}, "a no-derivatives licence does not let"),
    ({"license": "none", "redistributable": False}, '"transferable": true contradicts licence "none"'),
    ({"access": "gateway", "license": "proprietary", "redistributable": False}, 'needs "substitutable"'),
])
def test_licence_contradictions_and_missing_fields_are_errors(fields, message):
    with pytest.raises(ValueError, match=message):
        make(**fields)


def test_a_non_commercial_service_reached_through_a_gateway_is_no_contradiction():
    assert derive([make(access="gateway", license="CC-BY-NC-4.0", substitutable=True)]).dependency_class == "A1"


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
