"""Every bad input gets a clear message naming the file, the JSON path and a fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mt_eval.validate import validate_plugin

BASE: dict[str, Any] = {"name": "Echo", "entry_point": "pipeline:EchoMethod", "dependencies": []}


def dep(**fields: Any) -> dict[str, Any]:
    return {"id": "d", "kind": "data", "license": "MIT", "access": "bundled", "source": "d.tsv",
            "redistributable": True, "transferable": True, **fields}


# (case id, manifest, extra files, JSON path, message fragment, hint fragment)
CASES: list[tuple[str, Any, dict[str, str], str, str, str]] = [
    ("invalid-json", '{"name": "x",\n  "entry_point" "a:B"}', {}, "$",
     "invalid JSON at line 2, column 17: Expecting ':' delimiter", "fix the JSON syntax"),
    ("trailing-comma", '{"name": "x",\n}', {}, "$", "invalid JSON at line 2, column 1", "trailing comma"),
    ("comment", '{"name": "x", // the method\n  "entry_point": "pipeline:EchoMethod"}', {}, "$",
     "invalid JSON at line 1, column 15", "JSON has no comments: remove the comment"),
    ("duplicate-key", '{"name": "x", "name": "y", "entry_point": "pipeline:EchoMethod", "dependencies": []}', {},
     "$", 'key "name" appears more than once', "keep one"),
    ("not-an-object", '["name"]', {}, "$", "expected an object, got an array", ""),
    ("wrong-type", {**BASE, "name": 42}, {}, "$.name", "expected a string, got the number 42", ""),
    ("pairs-not-array", {**BASE, "supported_pairs": "eng>spa"}, {}, "$.supported_pairs",
     'expected an array of strings, got the string "eng>spa"', 'wrap it in brackets: ["eng>spa"]'),
    ("unknown-field", {**BASE, "entrypoint": "x:Y"}, {}, "$.entrypoint", 'unknown field "entrypoint"',
     'did you mean "entry_point"?'),
    ("unknown-dependency-field", {**BASE, "dependencies": [{**dep(), "licence": "MIT"}]}, {},
     "$.dependencies[0].licence", 'unknown field "licence"', 'did you mean "license"?'),
    ("missing-name", {"entry_point": "pipeline:EchoMethod"}, {}, "$.name", 'required field "name" is missing',
     'add "name": a string'),
    ("bad-class", {**BASE, "class": "pipline"}, {}, "$.class", 'the string "pipline" is not a valid method class',
     'did you mean "pipeline"?'),
    ("bad-method-id", {**BASE, "method_id": "My Method"}, {}, "$.method_id", '"My Method" is not kebab-case',
     'for example "my-method"'),
    ("bad-pair", {**BASE, "supported_pairs": ["eng-spa"]}, {}, "$.supported_pairs[0]",
     '"eng-spa" is not a "source>target" language pair', 'with ISO 639 codes, e.g. "eng>spa"'),
    ("bad-dependency-class", {**BASE, "dependency_class": "B"}, {}, "$.dependency_class",
     'the string "B" is not a valid dependency class', 'use one of "A1", "A2", "O", "S", "X"'),
    ("bad-kind", {**BASE, "dependencies": [dep(kind="dataset")]}, {}, "$.dependencies[0].kind",
     "is not a valid dependency kind", 'did you mean "data"?'),
    ("mirrored-without-pin", {**BASE, "dependencies": [dep(access="mirrored")]}, {}, "$.dependencies[0].pin",
     'a "mirrored" dependency needs "pin"', "exact version, commit or sha256:HEX"),
    ("missing-source", {**BASE, "dependencies": [{"id": "d", "kind": "data", "license": "MIT", "access": "bundled",
                                                  "redistributable": True, "transferable": True}]}, {},
     "$.dependencies[0].source", 'required field "source" is missing', "a URL, a package"),
    ("missing-flags", {**BASE, "dependencies": [{"id": "d", "kind": "data", "license": "MIT", "access": "bundled",
                                                 "source": "d.tsv"}]}, {},
     "$.dependencies[0].redistributable", 'required field "redistributable" is missing', 'true or false'),
    ("non-commercial-redistributable", {**BASE, "dependencies": [dep(license="CC-BY-NC-4.0")]}, {},
     "$.dependencies[0].redistributable", 'contradicts licence "CC-BY-NC-4.0": a non-commercial licence',
     "set redistributable to false"),
    ("bad-sha256-pin", {**BASE, "dependencies": [dep(access="mirrored", pin="sha256:abc")]}, {},
     "$.dependencies[0].pin", '"sha256:abc" is not a SHA-256 pin', "64 hex digits"),
    ("invalid-spdx", {**BASE, "dependencies": [dep(license="Apache2")]}, {}, "$.dependencies[0].license",
     '"Apache2" is not a valid SPDX licence expression', 'did you mean "Apache-2.0"'),
    ("broken-spdx-expression", {**BASE, "dependencies": [dep(license="MIT OR")]}, {}, "$.dependencies[0].license",
     "OR needs a licence on each side", "SPDX licence expression"),
    ("gateway-without-substitutable", {**BASE, "dependencies": [dep(access="gateway", redistributable=False,
                                                                    transferable=False)]}, {},
     "$.dependencies[0].substitutable", 'a "gateway" dependency needs "substitutable"', "true if any equivalent"),
    ("redistributable-without-licence", {**BASE, "dependencies": [dep(license="none", transferable=False)]}, {},
     "$.dependencies[0].redistributable", '"redistributable": true contradicts licence "none"', ""),
    ("duplicate-dependency-id", {**BASE, "dependencies": [dep(), dep()]}, {}, "$.dependencies[1].id",
     'dependency id "d" is already used by $.dependencies[0]', "its own id"),
    ("class-without-list", {"name": "Echo", "entry_point": "pipeline:EchoMethod", "dependency_class": "S"}, {},
     "$.dependency_class", 'declares "S" but has no "dependencies" list', '"dependencies": []'),
    ("no-entry-point", {"name": "Echo", "dependencies": []}, {}, "$", "no entry point: the method cannot run",
     '"entry_point": "pipeline:MyMethod"'),
    ("entry-escapes", {**BASE, "entry_point": "../x:Y"}, {}, "$.entry_point",
     'entry point "../x:Y" leaves the plugin directory', "inside the plugin directory"),
    ("entry-not-module-class", {**BASE, "entry_point": "pipeline.py"}, {}, "$.entry_point",
     '"pipeline.py" is not of the form "module:Class"', '"pipeline:MyMethod"'),
    ("missing-module", {**BASE, "entry_point": "nothere:EchoMethod"}, {}, "$.entry_point",
     'module "nothere" not found: no nothere.py', "Python modules in the plugin: pipeline"),
    ("missing-class", {**BASE, "entry_point": "pipeline:Echo"}, {}, "$.entry_point",
     'module has no attribute "Echo"', "classes defined there: EchoMethod"),
    ("syntax-error", BASE, {"pipeline.py": "class EchoMethod(\n"}, "$.entry_point",
     'importing "pipeline" failed: SyntaxError', "pipeline.py"),
    ("import-raises", BASE, {"pipeline.py": "import no_such_package_xyz\n"}, "$.entry_point",
     "ModuleNotFoundError: No module named 'no_such_package_xyz' (pipeline.py:1)", "fix the error in pipeline.py"),
    ("no-translate", BASE, {"pipeline.py": "class EchoMethod:\n    pass\n"}, "$.entry_point",
     "EchoMethod has no translate method", "TranslationMethod protocol"),
    ("translate-not-async", BASE,
     {"pipeline.py": "class EchoMethod:\n    def translate(self, entries, config):\n        return []\n"},
     "$.entry_point", "EchoMethod.translate is not async", ""),
    ("translate-wrong-arity", BASE,
     {"pipeline.py": "class EchoMethod:\n    async def translate(self, entries):\n        return []\n"},
     "$.entry_point", "EchoMethod.translate(entries) cannot be called as translate(entries, config)", ""),
    ("constructor-needs-arguments", BASE,
     {"pipeline.py": "class EchoMethod:\n    def __init__(self, api_key):\n        pass\n"
                     "    async def translate(self, entries, config):\n        return []\n"},
     "$.entry_point", "EchoMethod() requires api_key, which the loader cannot supply", "give those parameters"),
    ("constructor-raises", BASE,
     {"pipeline.py": "class EchoMethod:\n    def __init__(self):\n        raise RuntimeError('no model')\n"
                     "    async def translate(self, entries, config):\n        return []\n"},
     "$.entry_point", "EchoMethod() failed: RuntimeError: no model (pipeline.py:3)", ""),
    ("misspelled-hook", BASE,
     {"pipeline.py": "from mt_eval.hookspecs import hookimpl\n\n@hookimpl\ndef register_method(register):\n"
                     "    pass\n\nclass EchoMethod:\n    async def translate(self, entries, config):\n"
                     "        return []\n"},
     "$", 'unknown hook "register_method"', 'did you mean "register_metrics"?'),
    ("node-entry-missing", {"name": "Echo", "node_entry": "translate.js", "dependencies": []}, {},
     "$.node_entry", '"translate.js" does not exist in the plugin directory', ""),
    ("node-entry-not-js", {"name": "Echo", "node_entry": "translate.py", "dependencies": []}, {},
     "$.node_entry", '"translate.py" is not a JavaScript file', ".js"),
    ("card-wrong-type", BASE, {}, "$.open_source", "expected true or false, got the string \"yes\"",
     "without quotes"),
]


@pytest.mark.parametrize(("manifest", "files", "path", "message", "hint"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_reported_with_path_message_and_hint(make_plugin, manifest, files, path, message, hint):
    card = {"open_source": "yes"} if path == "$.open_source" else None
    directory = make_plugin(manifest, files, card=card)
    report = validate_plugin(directory)
    assert not report.passed()
    matching = [p for p in report.errors if p.path == path and message in p.message]
    assert matching, f"no error at {path} containing {message!r}; got:\n" + "\n".join(
        p.render() for p in report.problems)
    problem = matching[0]
    assert hint in (problem.hint or "")
    assert problem.file.endswith(("method.json", "method_card.json", "pipeline.py"))


def test_a_failed_import_names_the_command_that_shows_its_traceback_with_the_sdk(make_plugin, tmp_path):
    """Before, the fix said `python pipeline.py`: whichever Python PATH finds, often one without the SDK, so a plugin
    that imports mt_eval showed "No module named 'mt_eval'" there instead of its own error."""
    import re
    import shlex

    directory = make_plugin(BASE, {"pipeline.py": "from mt_eval.results import TranslationResult\n"
                                                  "undefined_name_here\n"})
    problem = next(p for p in validate_plugin(directory).errors if p.path == "$.entry_point")
    assert "NameError: name 'undefined_name_here' is not defined (pipeline.py:2)" in problem.message
    command = re.search(r"run `([^`]+)` to see the full traceback", problem.hint or "")
    assert command, problem.hint
    shown = subprocess.run(shlex.split(command[1]), capture_output=True, text=True, timeout=60,
                           env={**os.environ, "PATH": str(tmp_path / "no-programs-here")})
    assert "NameError: name 'undefined_name_here' is not defined" in shown.stderr, shown.stderr


def test_invalid_utf8_names_the_byte(make_plugin):
    directory = make_plugin('{"name": "x"}')
    (directory / "method.json").write_bytes(b'{"name": "caf\xe9",\n "entry_point": "pipeline:EchoMethod"}')
    [problem] = validate_plugin(directory).errors
    assert problem.message == "not valid UTF-8: byte 0xe9 at line 1 (offset 13)"
    assert problem.hint == "save the file as UTF-8"


def test_every_problem_is_reported_at_once(make_plugin):
    manifest = {
        "name": "Echo", "method_id": "Echo_Method", "class": "pipline", "entry_point": "pipeline:EchoMethod",
        "colour": "blue",
        "dependencies": [dep(access="mirrored"), dep(id="e", license="GPLv3"), {**dep(id="f"), "licence": "x"}],
    }
    report = validate_plugin(make_plugin(manifest))
    paths = sorted(p.path for p in report.errors)
    assert paths == sorted([
        "$.method_id", "$.class", "$.colour", "$.dependencies[0].pin", "$.dependencies[1].license",
        "$.dependencies[2].licence",
    ])


def test_missing_directory_and_missing_manifest(tmp_path: Path):
    [gone] = validate_plugin(tmp_path / "nope").errors
    assert gone.message == "no such directory"
    [no_manifest] = validate_plugin(tmp_path).errors
    assert no_manifest.file.endswith("method.json")
    assert "not a method plugin" in no_manifest.message
    assert "mt-eval new" in (no_manifest.hint or "")


@pytest.mark.skipif(os.name != "posix", reason="symlinks and FIFOs")
@pytest.mark.parametrize("name", ["method.json", "method_card.json"])
def test_a_plugin_file_that_is_a_directory_a_fifo_or_a_looping_link_is_named_as_such(make_plugin, name):
    """Before: each was taken for a missing file: method.json "missing", and such a method_card.json not checked
    at all (the plugin valid)."""
    for kind, expected in [("directory", "a directory, not a file"),
                           ("fifo", "not a regular file (a FIFO, socket or device)"),
                           ("loop", f"a link to {name}, which is not a file")]:
        directory = make_plugin(BASE, card={"paradigm": "rule-based"})
        path = directory / name
        path.unlink()
        if kind == "directory":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(name)
        [problem] = validate_plugin(directory, run_code=False).errors
        assert (problem.file, problem.message) == (str(path), expected)
        assert f"put the plugin's {name} (a JSON file) itself in its place" in (problem.hint or "")


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_symlinked_module_outside_the_directory_is_refused(make_plugin, tmp_path: Path):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("class EchoMethod:\n    async def translate(self, e, c):\n        return []\n")
    directory = make_plugin({**BASE, "entry_point": "linked:EchoMethod"})
    (directory / "linked.py").symlink_to(outside)
    errors = validate_plugin(directory).errors
    [problem] = [p for p in errors if p.path == "$.entry_point"]
    assert "outside the plugin directory" in problem.message
    assert any(p.code == "undeclared" and "is a link to" in p.message for p in errors)  # the static scan's finding


def test_card_may_not_contradict_the_manifest(make_plugin):
    directory = make_plugin({**BASE, "class": "pipeline"}, card={"class": "human", "paradigm": "llm"})
    [problem] = validate_plugin(directory).errors
    assert problem.file.endswith("method_card.json")
    assert problem.path == "$.class"
    assert problem.message == 'says "human" but ' + str(directory / "method.json") + ' says "pipeline"'


def test_card_problems_name_the_card_file(make_plugin):
    directory = make_plugin(BASE, card={"paradigm": "neural", "licence": "MIT", "license": "Apache2"})
    found = {(Path(p.file).name, p.path, p.message.split(":")[0]) for p in validate_plugin(directory).errors}
    assert found == {
        ("method_card.json", "$.paradigm", 'the string "neural" is not a valid paradigm'),
        ("method_card.json", "$.licence", 'unknown field "licence"'),
    }


def test_runtime_method_card_is_validated_too(make_plugin):
    code = ("class EchoMethod:\n    async def translate(self, entries, config):\n        return []\n"
            "    def method_card(self):\n        return {'paradigm': 'quantum'}\n")
    report = validate_plugin(make_plugin(BASE, {"pipeline.py": code}))
    [problem] = report.errors
    assert problem.file == "pipeline:EchoMethod method_card()"
    assert problem.path == "$.paradigm"


def test_warnings_do_not_fail_unless_strict(make_plugin):
    report = validate_plugin(make_plugin({"name": "Echo", "entry_point": "pipeline:EchoMethod"}))
    assert report.passed()
    assert [p.message for p in report.warnings] == [
        'dependency class undeclared: method.json has no "dependencies" list']
    assert not report.passed(strict=True)


def test_protocol_check_reports_every_deviation_at_once(make_plugin):
    code = ("class EchoMethod:\n    def translate(self, entries):\n        return []\n"
            "    method_card = {'name': 'x'}\n    def aclose(self):\n        pass\n")
    report = validate_plugin(make_plugin(BASE, {"pipeline.py": code}))
    assert [p.message for p in report.errors] == [
        "EchoMethod.translate is not async: write `async def translate(self, entries, config)`",
        "EchoMethod.translate(entries) cannot be called as translate(entries, config)",
        "EchoMethod.method_card must be a method returning a dict, not a dict",
        "EchoMethod.aclose must be `async def aclose(self)`",
    ]


@pytest.mark.parametrize(("text", "line", "column", "message"), [
    ('{"name": "x",\n}', 2, 1, "Expecting property name enclosed in double quotes"),
    ('{"a": 1, }', 1, 10, "Expecting property name enclosed in double quotes"),
    ("[1, 2,\n\t]", 2, 2, "Expecting value"),
])
def test_a_trailing_comma_is_reported_the_same_on_every_python(text, line, column, message):
    from mt_eval.json_input import same_on_every_python

    comma = text.rindex(",")
    kind = "object" if text.startswith("{") else "array"
    newer = json.JSONDecodeError(f"Illegal trailing comma before end of {kind}", text, comma)  # Python 3.13's
    for error in (newer, same_on_every_python(newer)):
        found = same_on_every_python(error)
        assert (found.lineno, found.colno, found.msg) == (line, column, message)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:  # this Python's own error agrees
        found = same_on_every_python(exc)
        assert (found.lineno, found.colno, found.msg) == (line, column, message)


@pytest.mark.parametrize(("text", "message", "hint"), [
    ("", "line 1, column 1: Expecting value", "the file is empty"),
    ('{"name": "x",', "line 1, column 14: Expecting property name", "it looks cut off"),
    ('{"paradigm": 5', "line 1, column 15: Expecting ',' delimiter", "it looks cut off"),
    ('{"a": "bc', "line 1, column 7: Unterminated string", "has no closing double quote: the file looks cut off"),
    ('{"a": 1,}', "line 1, column 9: Expecting property name", "remove the trailing comma before the closing brace"),
    ('{"a": "b\tc"}', "line 1, column 9: Invalid control character", r"as \t or \n"),
    ('{"a": 1} {"a": 2}', "line 1, column 10: Extra data", "remove what follows the end of the JSON document"),
    ("\0" * 512, "line 1, column 1: Expecting value", "a NUL byte here, which no JSON text has: the file was damaged"),
    ('{"a": 1}\n\0\0', "line 2, column 1: Extra data", "a NUL byte here, which no JSON text has: the file was damaged"),
])
def test_a_cut_off_or_empty_file_is_named_as_such(text, message, hint):
    from mt_eval.json_input import parse_json

    _, problems = parse_json(text.encode(), file="card.json")
    assert problems[0].message.startswith(f"invalid JSON at {message}")
    assert not problems[0].message.endswith(" at")  # Python's "… starting at" has its position in front
    assert hint in problems[0].hint


# (text, [(path, key)]): the object that writes a key twice, also inside a value a repeated key replaced; Node's
# reader says the same (bridge/node/test/manifest.test.js)
REPEATED_KEYS = [
    ('{"dependencies": [{"id": "a", "id": "b"}]}', [("$.dependencies[0]", "id")]),
    ('{"pairs": {"en:es": {"model": 1, "model": 2}}, "pairs": {}}', [('$.pairs["en:es"]', "model"), ("$", "pairs")]),
    ('[{"a": 1, "a": 1}, {"a": 1, "a": 1, "a": 1}]', [("$[0]", "a"), ("$[1]", "a")]),
]


@pytest.mark.parametrize(("text", "expected"), REPEATED_KEYS)
def test_a_key_written_twice_is_said_at_the_path_of_its_object(text, expected):
    """Before, every repeated key was said at $, however deep its object."""
    from mt_eval.json_input import parse_json

    _, problems = parse_json(text.encode(), file="method.json")
    assert [(p.path, p.message) for p in problems] == [
        (path, f'key "{key}" appears more than once in an object') for path, key in expected]


def test_verify_names_a_truncated_card(tmp_path: Path):
    card = tmp_path / "card.json"
    card.write_text('{"card_version": "1", "results": [{"id": "1", "predicted": "Hola"')
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "verify", str(card)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode != 0
    assert "looks cut off" in done.stdout + done.stderr
    assert "trailing comma" not in done.stdout + done.stderr
