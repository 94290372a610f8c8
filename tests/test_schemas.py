"""The checked-in JSON Schemas are generated from the Structs and must not drift."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from mt_eval.records import RunConfig, TranslationResult, result_problem
from mt_eval.schemas import drifted_schemas, render_schema, schema_types, write_schemas
from mt_eval.strict import decode_value

SCHEMAS = Path(__file__).parent.parent / "bridge" / "schemas"


def test_checked_in_schemas_match_the_structs():
    drift = drifted_schemas(SCHEMAS)
    assert drift == [], "regenerate with `nox -s schemas`:\n" + "\n".join(drift)


def test_drift_is_detected(tmp_path: Path):
    write_schemas(tmp_path)
    assert drifted_schemas(tmp_path) == []
    (tmp_path / "method.schema.json").write_text("{}\n")
    (tmp_path / "stale.schema.json").write_text("{}\n")
    (tmp_path / "run-config.schema.json").unlink()
    assert drifted_schemas(tmp_path) == [
        f"{tmp_path / 'method.schema.json'}: differs from the Struct it is generated from",
        f"{tmp_path / 'run-config.schema.json'}: missing",
        f"{tmp_path / 'stale.schema.json'}: not generated from any Struct: remove it (regenerating leaves it there)",
    ]


def test_a_node_file_generated_no_more_is_named_and_each_schema_has_its_own_file(tmp_path: Path):
    schemas, node = tmp_path / "schemas", tmp_path / "node"
    node.mkdir()
    (node / "package.json").write_text("{}\n")
    write_schemas(schemas, node)
    generated = node / "lib" / "generated"
    assert sorted(p.stem for p in (generated / "schemas").glob("*.json")) == sorted(schema_types())
    assert json.loads((generated / "schemas" / "run-config.json").read_text()) == \
        json.loads((schemas / "run-config.schema.json").read_text())
    assert drifted_schemas(schemas, node) == []
    (generated / "contract.json").write_text("{}\n")  # the single file of an older layout
    (generated / "schemas" / "retired.json").write_text("{}\n")
    assert drifted_schemas(schemas, node) == [
        f"{generated / 'contract.json'}: not generated from any Struct: remove it (regenerating leaves it there)",
        f"{generated / 'schemas' / 'retired.json'}: not generated from any Struct: remove it (regenerating leaves it "
        "there)",
    ]


def test_manifest_schema_carries_the_contract():
    schema = json.loads(render_schema("method", schema_types()["method"]))
    manifest = schema["$defs"]["Manifest"]
    assert manifest["additionalProperties"] is False
    assert manifest["required"] == ["name"]
    assert manifest["properties"]["class"]["enum"] == [
        "api", "coached-llm", "custom-plugin", "human", "pipeline", "raw-llm"]
    dependency = schema["$defs"]["Dependency"]
    assert dependency["properties"]["access"]["enum"] == ["bundled", "external-api", "gateway", "mirrored"]


def test_corpus_entries_keep_extra_fields():
    schema = json.loads(render_schema("corpus-entry", schema_types()["corpus-entry"]))
    assert "additionalProperties" not in schema["$defs"]["CorpusEntry"]


def test_run_config_is_strict():
    config, problems = decode_value({"source_lang": "eng", "target_lang": "spa", "temperature": 3,
                                     "batchsize": 4}, RunConfig, file="config")
    assert config is None
    assert [(p.path, p.message) for p in problems] == [
        ("$.batchsize", 'unknown field "batchsize"'), ("$.temperature", "must be <= 2, got 3")]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"source_lang": "English", "target_lang": "spa"}, RunConfig)


def test_result_needs_a_prediction_or_an_error():
    assert result_problem(msgspec.convert({"id": "1"}, TranslationResult)) == (
        'a result needs "predicted" or, when the entry failed, "error"')
    assert "tool_call_count is 0 but 1 tool calls" in result_problem(
        msgspec.convert({"id": "1", "predicted": "x", "tool_calls": [{}]}, TranslationResult))
    result = msgspec.convert({"id": "1", "error": "timeout"}, TranslationResult)
    assert result_problem(result) is None
    assert result.usage.prompt_tokens == 0
    assert msgspec.json.decode(msgspec.json.encode(result)) == {
        "id": "1", "predicted": None, "latency_s": 0.0,
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": None},
        "error": "timeout", "tool_calls": [], "tool_call_count": 0, "metadata": {}, "raw_predicted": None,
        "cached": None, "abstained": False, "abstain_reason": None}


def test_the_shipped_documents_validate_against_their_schemas():
    """What the examples ship (and a file's ``$schema`` points editors at) is what the published schemas accept."""
    import jsonschema

    repo, examples = SCHEMAS.parent.parent, SCHEMAS.parent.parent / "examples"

    def problems(stem: str, document: object) -> list[str]:
        schema = json.loads((SCHEMAS / f"{stem}.schema.json").read_text(encoding="utf-8"))
        return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)]

    documents = [("gate-policy", p) for p in sorted((examples / "policies").glob("*.json"))]
    documents += [("method", p) for p in sorted(examples.glob("*/method.json"))]
    documents += [("champollion-config", examples / "champollion-project" / "champollion.config.json")]
    assert len(documents) > 5
    for stem, path in documents:
        assert problems(stem, json.loads(path.read_text(encoding="utf-8"))) == [], path.relative_to(repo)
    for entry in json.loads((examples / "data" / "eng-spa-demo.json").read_text(encoding="utf-8"))["entries"]:
        assert problems("corpus-entry", entry) == [], entry
    assert problems("gate-policy", {"max_abstention_rate": 2}) == ["2 is not valid under any of the given schemas"]
    assert problems("gate-policy", {"min_scored": 0, "colour": "red"}) == [
        "0 is less than the minimum of 1", "Additional properties are not allowed ('colour' was unexpected)"]
