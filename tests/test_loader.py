"""load_method: explicit paths, isolated imports, seed-era defaults, constructor arguments, cards."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from mt_eval.bridge.method import BridgeMethod
from mt_eval.extensions import make_plugin_manager, registered_metrics
from mt_eval.loader import PluginLoadError, load_method
from mt_eval.manifest import kebab_case
from mt_eval.records import RunConfig

CONFIG = RunConfig(source_lang="eng", target_lang="spa")
REVERSE = Path(__file__).parent / "fixtures" / "reverse"
HELPER_METHOD = '''
from helpers import WORD


class Method:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": WORD} for e in entries]
'''


async def test_loaded_method_translates(make_plugin):
    loaded = load_method(make_plugin())
    results = await loaded.method.translate([{"id": "1", "source": "hi"}], CONFIG)
    assert results == [{"id": "1", "predicted": "HI"}]


async def test_two_plugins_with_the_same_module_names_load_side_by_side(make_plugin):
    manifest = {"name": "M", "entry_point": "pipeline:Method", "dependencies": []}
    path_before = list(sys.path)
    modules_before = set(sys.modules)
    first = load_method(make_plugin(manifest, {"pipeline.py": HELPER_METHOD, "helpers.py": "WORD = 'uno'\n"}))
    second = load_method(make_plugin(manifest, {"pipeline.py": HELPER_METHOD, "helpers.py": "WORD = 'dos'\n"}))
    entries = [{"id": "a", "source": "x"}]
    assert (await first.method.translate(entries, CONFIG))[0]["predicted"] == "uno"
    assert (await second.method.translate(entries, CONFIG))[0]["predicted"] == "dos"
    assert sys.path == path_before
    new_top_level = {m.split(".")[0] for m in set(sys.modules) - modules_before}
    assert "pipeline" not in new_top_level
    assert "helpers" not in new_top_level


CHANGES_DIRECTORY = """
import os

os.chdir(os.path.dirname(os.path.abspath(__file__)))  # (to open its data files by relative paths)


class Method:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


def test_a_plugin_that_changes_the_working_directory_as_it_is_imported_does_not_move_the_run(make_plugin,
                                                                                            tmp_path: Path):
    """`--out run` was written inside the plugin directory (or failed halfway: 'No such file or directory')."""
    import subprocess

    plugin = make_plugin({"name": "M", "entry_point": "pipeline:Method", "supported_pairs": ["eng>spa"],
                          "dependency_class": "S", "dependencies": []}, {"pipeline.py": CHANGES_DIRECTORY})
    work = tmp_path / "work"
    work.mkdir()
    (work / "corpus.jsonl").write_text('{"id": "1", "source": "hi", "reference": "HI"}\n')
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", os.path.relpath(plugin, work),
                           "--corpus", "corpus.jsonl", "--pair", "eng>spa", "--out", "run", "--quiet",
                           "--resamples", "100", "--latency-sample", "0"], cwd=work, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode in (0, 5), done.stderr
    assert json.loads((work / "run" / "card.json").read_text())["results"][0]["predicted"] == "HI"
    assert not (plugin / "run").exists()
    assert (f'warning: importing "pipeline" changed the working directory to {plugin.resolve()}; it is changed back '
            "(open the plugin's files by their path: its directory is given to __init__ as `directory`)"
            ) in done.stderr


async def test_dotted_entry_point_with_relative_imports(make_plugin):
    files = {
        "engine/__init__.py": "",
        "engine/core.py": "from .rules import apply\n\nclass Method:\n"
                          "    async def translate(self, entries, config):\n"
                          "        return [{'id': e['id'], 'predicted': apply(e['source'])} for e in entries]\n",
        "engine/rules.py": "def apply(text):\n    return text[::-1]\n",
    }
    loaded = load_method(make_plugin({"name": "M", "entry_point": "engine.core:Method", "dependencies": []}, files))
    assert (await loaded.method.translate([{"id": "1", "source": "abc"}], CONFIG))[0]["predicted"] == "cba"


def test_seed_era_manifest_loads_with_documented_defaults(make_plugin):
    directory = make_plugin({"name": "Old Method", "entry_point": "pipeline:EchoMethod"}, name="Old_Method v1")
    loaded = load_method(directory)
    assert loaded.method_id == "old-method-v1"
    assert loaded.manifest.method_class == "custom-plugin"
    assert loaded.manifest.supported_pairs == []
    assert loaded.source.derivation.dependency_class is None
    assert (loaded.card.method_id, loaded.card.name, loaded.card.method_class) == (
        "old-method-v1", "Old Method", "custom-plugin")
    assert loaded.card.dependency_class is None


def test_constructor_gets_manifest_and_directory_when_it_asks(make_plugin):
    code = ("class Named:\n    def __init__(self, manifest, directory):\n        self.got = (manifest, directory)\n"
            "    async def translate(self, entries, config):\n        return []\n\n"
            "class Kw:\n    def __init__(self, **options):\n        self.got = options\n"
            "    async def translate(self, entries, config):\n        return []\n\n"
            "class Bare:\n    async def translate(self, entries, config):\n        return []\n")
    named = load_method(make_plugin({"name": "A", "entry_point": "pipeline:Named", "dependencies": []},
                                    {"pipeline.py": code}))
    assert named.method.got == (named.manifest, named.directory)  # type: ignore[attr-defined]
    kw = load_method(make_plugin({"name": "B", "entry_point": "pipeline:Kw", "dependencies": []},
                                 {"pipeline.py": code}))
    assert set(kw.method.got) == {"manifest", "directory"}  # type: ignore[attr-defined]
    assert load_method(make_plugin({"name": "C", "entry_point": "pipeline:Bare", "dependencies": []},
                                   {"pipeline.py": code})).method is not None


def test_card_precedence_manifest_then_card_file_then_method(make_plugin):
    code = ("class EchoMethod:\n    async def translate(self, entries, config):\n        return []\n"
            "    def method_card(self):\n        return {'description': 'from the method', 'tools_used': ['fst']}\n")
    manifest = {"name": "Echo", "entry_point": "pipeline:EchoMethod", "dependencies": [], "class": "pipeline",
                "description": "from method.json", "author": "A. Author", "version": "1.2.0",
                "supported_pairs": ["eng>spa"]}
    card_file = {"description": "from method_card.json", "paradigm": "rule-based", "author": "Card Author"}
    card = load_method(make_plugin(manifest, {"pipeline.py": code}, card=card_file)).card
    assert card.description == "from the method"
    assert card.author == "Card Author"
    assert card.paradigm == "rule-based"
    assert card.tools_used == ["fst"]
    assert card.version == "1.2.0"
    assert card.supported_pairs == ["eng>spa"]
    assert card.dependency_class == "S"
    assert card.method_class == "pipeline"


def test_load_error_lists_every_problem(make_plugin):
    directory = make_plugin({"name": "Echo", "entry_point": "pipeline:EchoMethod", "dependencies": [],
                             "class": "pipline", "method_id": "Bad Id"})
    with pytest.raises(PluginLoadError) as caught:
        load_method(directory)
    text = str(caught.value)
    assert text.startswith(f"cannot load method plugin {directory}")
    assert "$.class" in text and "$.method_id" in text
    assert len(caught.value.problems) == 2


def test_invalid_plugin_code_is_never_run(make_plugin, tmp_path: Path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\nclass EchoMethod:\n    async def translate(self, e, c):\n" \
           "        return []\n"
    directory = make_plugin({"name": "Echo", "entry_point": "pipeline:EchoMethod", "dependencies": [],
                             "class": "nope"}, {"pipeline.py": code})
    with pytest.raises(PluginLoadError):
        load_method(directory)
    assert not marker.exists()


def test_loader_accepts_the_manifest_path_itself(make_plugin):
    directory = make_plugin()
    assert load_method(directory / "method.json").directory == directory


async def test_node_and_command_plugins_run_through_the_bridge(make_plugin):
    node = make_plugin({"name": "N", "node_entry": "translate.js", "dependencies": []},
                       {"translate.js": "export async function translate(entries, config) {\n"
                                        "  return entries.map((e) => ({ id: e.id, predicted: e.source + '!' }));\n}\n"})
    command = make_plugin({"name": "C", "command": [sys.executable, "-m", "mt_eval.cli", "serve", str(REVERSE)],
                           "dependencies": []})
    for directory, expected in [(node, "hi!"), (command, "spa:ih")]:
        loaded = load_method(directory)
        assert isinstance(loaded.method, BridgeMethod)
        try:
            assert (await loaded.method.translate([{"id": "1", "source": "hi"}], CONFIG))[0]["predicted"] == expected
        finally:
            await loaded.method.aclose()


async def test_isolate_runs_a_python_plugin_in_its_own_process(make_plugin):
    loaded = load_method(REVERSE, isolate=True)
    assert isinstance(loaded.method, BridgeMethod)
    try:
        [result] = await loaded.method.translate([{"id": "1", "source": "ab"}], CONFIG)
        assert result["predicted"] == "spa:ba"
        assert loaded.method._connection.pid != os.getpid()
    finally:
        await loaded.method.aclose()


def test_loaded_module_can_implement_hooks(make_plugin):
    code = ("from mt_eval.hookspecs import hookimpl\n\n"
            "class EchoMethod:\n    async def translate(self, entries, config):\n        return []\n\n"
            "@hookimpl\ndef register_metrics(register):\n    register('length', lambda h, r: 1.0)\n")
    manager = make_plugin_manager()
    loaded = load_method(make_plugin(files={"pipeline.py": code}), plugin_manager=manager)
    assert manager.is_registered(loaded.module)
    assert list(registered_metrics(manager)) == ["length"]
    load_method(loaded.directory, plugin_manager=manager)  # loading again does not register twice
    assert len(manager.get_plugins()) == 1


def method_id_vectors() -> list[dict[str, str]]:
    vectors = Path(__file__).parent.parent / "bridge" / "vectors" / "method-ids.json"
    return json.loads(vectors.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", method_id_vectors(), ids=lambda c: c["directory"])
def test_default_method_ids_follow_the_shared_vectors(case):
    assert kebab_case(case["directory"]) == case["method_id"]


def test_files_that_cannot_be_read_are_problems_not_tracebacks(make_plugin):
    """A method card or a code file that cannot be read (here: links to /proc/self/mem, which reads as an I/O error
    even for root), and a manifest that is a link to nothing."""
    from mt_eval.validate import validate_plugin

    card = make_plugin()
    (card / "method_card.json").symlink_to("/proc/self/mem")
    report = validate_plugin(card, run_code=False)
    assert [(p.file, p.message) for p in report.problems if p.severity == "error"] == [
        (str(card / "method_card.json"), "cannot read file: Input/output error")]
    code = make_plugin()
    (code / "helper.py").symlink_to("/proc/self/mem")
    report = validate_plugin(code, run_code=False)
    assert any("helper.py" in p.file and "outside the plugin directory" in p.message for p in report.problems)
    dangling = make_plugin()
    (dangling / "method.json").unlink()
    (dangling / "method.json").symlink_to("gone.json")
    report = validate_plugin(dangling, run_code=False)
    assert [p.message for p in report.problems] == ["a link to gone.json, which is not a file"]


def test_a_constructor_raising_a_base_exception_of_its_own_is_a_problem(make_plugin):
    code = ("class Halt(BaseException):\n    pass\n\n"
            "class EchoMethod:\n    def __init__(self):\n        raise Halt('no licence server')\n"
            "    async def translate(self, entries, config):\n        return []\n")
    with pytest.raises(PluginLoadError) as caught:
        load_method(make_plugin(files={"pipeline.py": code}))
    [problem] = caught.value.problems
    assert problem.message == "EchoMethod() failed: Halt: no licence server (pipeline.py:6)"


HOOK_SAYS = ("from mt_eval.hookspecs import hookimpl\n\n"
             "class EchoMethod:\n    async def translate(self, entries, config):\n        return []\n\n"
             "@hookimpl\ndef register_metrics(register):\n    register({name!r}, lambda h, r: 1.0)\n")


def test_two_plugins_with_the_same_method_id_register_their_hooks_side_by_side(make_plugin):
    manifest = {"name": "Echo", "method_id": "echo", "entry_point": "pipeline:EchoMethod", "dependencies": []}
    manager = make_plugin_manager()
    load_method(make_plugin(manifest, {"pipeline.py": HOOK_SAYS.format(name="first")}), plugin_manager=manager)
    load_method(make_plugin(manifest, {"pipeline.py": HOOK_SAYS.format(name="second")}), plugin_manager=manager)
    assert sorted(registered_metrics(manager)) == ["first", "second"]


async def test_a_plugin_edited_and_loaded_again_in_the_same_process_runs_its_new_code(make_plugin):
    """As its error message asks: fix __init__, then load it again (a notebook, a test session)."""
    code = ("import helpers\n\nclass EchoMethod:\n    def __init__(self):\n        raise ValueError('fix me')\n"
            "    async def translate(self, entries, config):\n"
            "        return [{'id': e['id'], 'predicted': helpers.WORD} for e in entries]\n")
    directory = make_plugin(files={"pipeline.py": code, "helpers.py": "WORD = 'old'\n"})
    with pytest.raises(PluginLoadError, match="fix me"):
        load_method(directory)
    (directory / "pipeline.py").write_text(code.replace("raise ValueError('fix me')", "pass"))
    # (another size: an edit of the same size within the clock's tick keeps its mtime, and Python's bytecode cache)
    (directory / "helpers.py").write_text("WORD = 'newer'\n")
    loaded = load_method(directory)
    assert (await loaded.method.translate([{"id": "1", "source": "x"}], CONFIG))[0]["predicted"] == "newer"
    manager = make_plugin_manager()
    load_method(directory, plugin_manager=manager)
    (directory / "pipeline.py").write_text(HOOK_SAYS.format(name="edited"))
    assert load_method(directory, plugin_manager=manager).module is not loaded.module
    assert list(registered_metrics(manager)) == ["edited"] and len(manager.get_plugins()) == 1


def test_an_entry_point_naming_a_function_says_what_it_returned(make_plugin):
    directory = make_plugin({"name": "F", "entry_point": "pipeline:make", "dependencies": []},
                            {"pipeline.py": "def make():\n    return 42\n"})
    with pytest.raises(PluginLoadError) as caught:
        load_method(directory)
    [problem] = [p for p in caught.value.problems if p.severity == "error"]
    assert problem.message.startswith('"make" is no class, and what make() returned falls short: int has no '
                                      "translate method")


def test_a_plugins_async_hook_is_a_problem_in_its_file(make_plugin):
    code = ("from mt_eval.hookspecs import hookimpl\n\nclass EchoMethod:\n"
            "    async def translate(self, entries, config):\n        return []\n\n"
            "@hookimpl\nasync def run_finished(run_id, card):\n    pass\n")
    directory = make_plugin(files={"pipeline.py": code})
    manager = make_plugin_manager()
    with pytest.raises(PluginLoadError) as caught:
        load_method(directory, plugin_manager=manager)
    [problem] = caught.value.problems
    assert (problem.file, problem.message) == (
        str((directory / "pipeline.py").resolve()),
        "hook run_finished is async: hooks are called, never awaited, so it would never run")
    assert manager.get_plugins() == set()


@pytest.mark.parametrize("name", ["method.json", "method_card.json"])
def test_a_plugin_file_that_is_a_directory_fails_the_load_saying_so(make_plugin, name):
    """Before, in run and translate: method.json "missing: this is not a method plugin", and such a
    method_card.json not read at all (the method ran without its card)."""
    directory = make_plugin(card={"paradigm": "rule-based"})
    (directory / name).unlink()
    (directory / name).mkdir()
    with pytest.raises(PluginLoadError) as caught:
        load_method(directory)
    [problem] = [p for p in caught.value.problems if p.severity == "error"]
    assert (problem.file, problem.message) == (str(directory / name), "a directory, not a file")
    assert problem.hint == f"put the plugin's {name} (a JSON file) itself in its place"
