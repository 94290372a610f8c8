"""The checked-in JSON Schemas are generated from the Structs and must not drift."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from mt_eval.cli import main
from mt_eval.errors import ExpectedError
from mt_eval.node_contract import DECLARATIONS, TYPES, declaration_file
from mt_eval.records import RunConfig, TranslationResult, result_problem
from mt_eval.schemas import drifted_schemas, render_schema, schema_types, write_schemas
from mt_eval.strict import decode_value

SCHEMAS = Path(__file__).parent.parent / "bridge" / "schemas"
GENERATED = SCHEMAS.parent / "node" / "lib" / "generated"


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


def test_the_typescript_types_are_split_by_concept_each_file_short_and_naming_where_its_types_come_from():
    """Before, one generated contract.d.ts of 1,190 lines declared every type."""
    files = {path.name: path.read_text(encoding="utf-8") for path in GENERATED.glob("*.d.ts")}
    assert set(files) == {f"{stem}.d.ts" for stem in DECLARATIONS} | {TYPES}
    assert {name: len(text.splitlines()) for name, text in files.items() if len(text.splitlines()) > 400} == {}
    assert re.findall(r"^export \* from '\./([\w-]+)\.js';$", files[TYPES], re.MULTILINE) == list(DECLARATIONS)
    declared_in = {name: file for file, text in files.items()
                   for name in re.findall(r"^export (?:interface|type) (\w+)", text, re.MULTILINE)}
    assert {"RunConfig", "RunCard", "DecisionCard", "GradingCard", "FreezeManifest", "Manifest"} <= set(declared_in)
    for file, text in files.items():
        if file == TYPES:
            continue
        imported = {name.strip(): f"{stem}.d.ts" for names, stem in
                    re.findall(r"^import type \{([^}]*)\} from '\./([\w-]+)\.js';$", text, re.MULTILINE)
                    for name in names.split(",") if name.strip()}
        assert all(declared_in[name] == source for name, source in imported.items()), file
        code = re.sub(r"/\*.*?\*/|//[^\n]*|^import type \{[^}]*\}[^\n]*", "", text, flags=re.DOTALL | re.MULTILINE)
        named = set(re.findall(r"\b[A-Z]\w*\b", code)) & set(declared_in)
        assert {name for name in named if declared_in[name] != file and name not in imported} == set(), file
        assert set(imported) <= named, f"{file} imports a type it does not use"


def test_a_struct_goes_to_the_file_of_its_module_and_one_of_an_unknown_module_is_refused():
    assert declaration_file("RunCard", "mt_eval.harness.runcard") == "run-card"
    assert declaration_file("FreezeManifest", "mt_eval.harness.freeze") == "freeze"
    assert declaration_file("GradingCard", "mt_eval.decisions.grading_card") == "grading"
    assert declaration_file("DecisionCard", "mt_eval.decisions.card") == "decisions"
    with pytest.raises(ExpectedError, match=r"^no TypeScript declaration file takes Thing \(of mt_eval\.harnessed\): "
                                            r"name its module in DECLARATIONS \(mt_eval/node_contract\.py\)$"):
        declaration_file("Thing", "mt_eval.harnessed")


def test_each_definition_of_every_schema_is_declared_with_its_own_fields():
    """Before, the decision card's Failure (with a question) was typed as the run card's Failure, of the same name."""
    declared: dict[str, list[str]] = {}
    for path in GENERATED.glob("*.d.ts"):
        for name, body in re.findall(r"^export interface (\w+) \{\n(.*?)^\}", path.read_text(encoding="utf-8"),
                                     re.DOTALL | re.MULTILINE):
            declared[name] = [json.loads(key) if key.startswith('"') else key
                              for key in re.findall(r'^  ("[^"]+"|\w+)\??: ', body, re.MULTILINE)]
    for schema in SCHEMAS.glob("*.schema.json"):
        for name, definition in json.loads(schema.read_text(encoding="utf-8"))["$defs"].items():
            if "properties" in definition:
                assert declared.get(name) == list(definition["properties"]), f"{name} of {schema.name}"
    assert declared["DecisionFailure"] == ["message", "count", "example_id", "question"]


def test_two_structs_of_one_name_are_refused_before_anything_is_written(tmp_path: Path, monkeypatch, capsys):
    module = "mt_eval.decisions.reports"  # a module DECLARATIONS places: without the refusal, nothing would fail
    other_failure = msgspec.defstruct("Failure", [("question", str)], module=module)  # another concept's Failure
    report = msgspec.defstruct("Report", [("failures", list[other_failure])], module=module)
    schemas, node = tmp_path / "schemas", tmp_path / "node"
    node.mkdir()
    (node / "package.json").write_text("{}\n")
    monkeypatch.setattr("mt_eval.schemas.schema_types", lambda: {**schema_types(), "report": report})
    assert main(["schemas", str(schemas)]) == 1
    assert capsys.readouterr().err == (
        "mt-eval schemas: two Structs are named Failure (mt_eval.harness.runcard and mt_eval.decisions.reports): the "
        "TypeScript types would type one as the other; rename one after its concept (as DecisionFailure is the "
        "decision card's)\n")
    assert not schemas.exists() and list(node.iterdir()) == [node / "package.json"]


def test_check_names_a_stale_a_missing_and_a_left_over_declaration_file(tmp_path: Path, capsys):
    schemas, node = tmp_path / "schemas", tmp_path / "node"
    node.mkdir()
    (node / "package.json").write_text("{}\n")
    write_schemas(schemas, node)
    assert main(["schemas", "--check", str(schemas)]) == 0
    generated = node / "lib" / "generated"
    run_card = generated / "run-card.d.ts"
    run_card.write_text(run_card.read_text().replace("export interface RunCard ", "export interface Card "))
    (generated / "freeze.d.ts").unlink()
    (generated / "results.d.ts").write_text("export {};\n")
    capsys.readouterr()
    assert main(["schemas", "--check", str(schemas)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{run_card}: differs from the Struct it is generated from",
        f"{generated / 'freeze.d.ts'}: missing",
        f"{generated / 'results.d.ts'}: not generated from any Struct: remove it (regenerating leaves it there)",
        f"regenerate with: mt-eval schemas {schemas}",
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
