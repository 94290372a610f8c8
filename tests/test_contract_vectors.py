"""The Python side passes the shared contract vectors (bridge/vectors/contract/), as the Node side does:
the same plugin is valid or invalid, with the same class and the same problems, word for word."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mt_eval.decisions.records import rows_problem
from mt_eval.dependency_classes import derive
from mt_eval.licenses import check_licence
from mt_eval.loader import PluginLoadError, load_method
from mt_eval.manifest import Manifest
from mt_eval.results import ResultNotes, results_for
from mt_eval.strict import decode_value
from mt_eval.validate import validate_plugin

VECTORS = Path(__file__).parent.parent / "bridge" / "vectors" / "contract"


def cases(name: str, key: str = "cases") -> list[dict[str, Any]]:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))[key]  # type: ignore[no-any-return]


def numbers(value: Any) -> Any:
    """``value`` with each ``{"$number": "Infinity"}`` (or "-Infinity", "NaN": no JSON spelling) as that number."""
    if isinstance(value, dict):
        if set(value) == {"$number"}:
            return float(value["$number"].replace("Infinity", "inf"))
        return {key: numbers(item) for key, item in value.items()}
    return [numbers(item) for item in value] if isinstance(value, list) else value


def write_plugin(root: Path, case: dict[str, Any]) -> Path:
    directory = root / case.get("directory", case["name"])
    for relative, text in case["files"].items():
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        (directory / relative).write_text(text, encoding="utf-8")
    for relative in case.get("directories", []):  # (a directory where a file belongs)
        (directory / relative).mkdir(parents=True)
    for relative, target in case.get("links", {}).items():  # (a symlink, its target relative to the link)
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        (directory / relative).symlink_to(target)
    return directory


def rows(problems: list[Any], directory: Path) -> list[list[Any]]:
    def relative(text: str | None) -> str | None:
        return None if text is None else text.replace(str(directory) + "/", "")

    return [[relative(p.file), p.path, p.severity, p.code, relative(p.message), relative(p.hint)] for p in problems]


@pytest.mark.parametrize("case", cases("plugins.json"), ids=lambda c: c["name"])
def test_plugin_reports(tmp_path: Path, case: dict[str, Any]) -> None:
    directory = write_plugin(tmp_path, case)
    report = validate_plugin(directory, run_code=False, scan=False)
    expected = case["report"]
    found = msgspec.to_builtins(report)
    found.pop("directory")
    found["problems"] = rows(report.problems, directory)
    assert found == expected


@pytest.mark.parametrize("case", cases("plugins.json"), ids=lambda c: c["name"])
def test_a_plugin_is_refused_with_the_same_message(tmp_path: Path, case: dict[str, Any]) -> None:
    directory = write_plugin(tmp_path, case)
    if case["load_error"] is None:
        load_method(directory)
        return
    with pytest.raises(PluginLoadError) as caught:
        load_method(directory)
    assert str(caught.value).replace(str(directory), "{plugin}") == case["load_error"]


@pytest.mark.parametrize("case", cases("dependency-matrix.json"), ids=lambda c: c["name"])
def test_dependency_matrix(case: dict[str, Any]) -> None:
    manifest = {"name": "m", "node_entry": "translate.js", "dependencies": [case["dependency"]]}
    value, problems = decode_value(manifest, Manifest, file="method.json")
    assert [[p.path, p.severity, p.code] for p in problems if p.code != "undeclared-class"] == case["problems"]
    errors = [p for p in problems if p.severity == "error"]
    derived = None if errors or value is None else derive(value.dependencies).contributions[0]
    assert (derived.dependency_class if derived else None) == case["class"]
    if derived is not None:
        assert derived.reason == case["reason"]


@pytest.mark.parametrize("case", cases("licences.json"), ids=lambda c: c["licence"])
def test_licences(case: dict[str, Any]) -> None:
    check = check_licence(case["licence"])
    assert [check.ok, check.normalized, check.is_open, check.restriction, check.message, check.hint] == [
        case["ok"], case["normalized"], case["open"], case["restriction"], case["message"], case["hint"]]


def in_python_words(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The vector's results with each error said per language (``{"python": ..., "node": ...}``) as Python says it."""
    return [{**r, "error": r["error"]["python"]} if isinstance(r["error"], dict) else r for r in results]


@pytest.mark.parametrize("case", cases("results.json"), ids=lambda c: c["name"])
def test_results(case: dict[str, Any]) -> None:
    notes = ResultNotes()
    results, unknown = results_for(case["entries"], numbers(case["returned"]), label="the method", notes=notes,
                                   elapsed_s=case["elapsed_s"])
    assert msgspec.to_builtins(results) == in_python_words(case["results"])
    assert len(unknown) == case["unknown"]
    assert notes.counts == case["notes"]


@pytest.mark.parametrize("case", cases("decision-rows.json"), ids=lambda c: c["name"])
def test_decision_rows(case: dict[str, Any]) -> None:
    assert rows_problem(case["rows"]) == case["problem"]


def test_a_nan_level_is_said_to_be_no_number_as_node_says_it() -> None:
    """(no JSON spelling, so not in the vectors) It was called "-Infinity … too large"."""
    rows = [{"id": "r", "state": {}, "questions": {"q": {"type": "score", "instructions": "?",
                                                         "levels": [{"value": 0}, {"value": math.nan}]}}}]
    assert rows_problem(rows) == "rows[0].questions.q.levels[1].value: NaN is not a level value: not a number"
