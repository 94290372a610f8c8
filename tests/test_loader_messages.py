"""What a newcomer is told when a Python method plugin does not load: where the fault is, and what to write."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from mt_eval.loader import PluginLoadError, load_method

REPO = Path(__file__).parent.parent
MANIFEST = {"name": "Echo", "entry_point": "pipeline:translate", "dependency_class": "S", "dependencies": []}
ECHO_CLASS = '''
class Glossary:
    def translate(self, text):
        return text


class EchoMethod:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]
'''


def load_problem(directory: Path) -> tuple[str, str | None]:
    """The one problem that stops the plugin in ``directory`` loading: its message and fix."""
    with pytest.raises(PluginLoadError) as caught:
        load_method(directory)
    [problem] = caught.value.problems
    return problem.message, problem.hint


@pytest.mark.parametrize("function", ["async def translate(entries, config):\n    return []\n",
                                      "def translate(entries, config):\n    return []\n"])
def test_an_entry_point_naming_a_translate_function_is_told_to_name_the_class_that_has_it(make_plugin, function):
    """Before: 'translate() requires entries, config, which the loader cannot supply', fix 'give those parameters
    defaults'. Its code is a protocol fault's: the import worked (`mt-eval validate` adds no sandbox words)."""
    with pytest.raises(PluginLoadError) as caught:
        load_method(make_plugin(MANIFEST, {"pipeline.py": ECHO_CLASS + "\n\n" + function}))
    [problem] = caught.value.problems
    message, hint = problem.message, problem.hint
    assert (problem.path, problem.code) == ("$.entry_point", "protocol")
    assert message == ('"translate" is a function, not a class: the entry point names a class (or a factory that '
                       "returns a method) whose instances have `async def translate(self, entries, config)`")
    assert hint == 'point it at the class that has translate: "entry_point": "pipeline:EchoMethod"'


def test_a_translate_function_in_a_module_without_a_method_class_is_shown_the_class_to_write(make_plugin):
    files = {"pipeline.py": "class Helper:\n    pass\n\n\nasync def translate(entries, config):\n    return []\n"}
    assert load_problem(make_plugin(MANIFEST, files))[1] == (
        "move translate into a class as `async def translate(self, entries, config)` and point at that class, e.g. "
        '"entry_point": "pipeline:MyMethod" (pipeline.py defines Helper, none with translate)')
    alone = {"pipeline.py": "async def run(entries, config):\n    return []\n"}
    message, hint = load_problem(make_plugin({**MANIFEST, "entry_point": "pipeline:run"}, alone))
    assert message.startswith('"run" is a function, not a class')
    assert hint == ("move run into a class as `async def translate(self, entries, config)` and point at that class, "
                    'e.g. "entry_point": "pipeline:MyMethod" (pipeline.py defines no class)')


def test_a_decide_function_is_told_of_decide(make_plugin):
    manifest = {**MANIFEST, "entry_point": "pipeline:decide", "implements": ["decide"]}
    message, hint = load_problem(make_plugin(manifest, {"pipeline.py": "async def decide(rows, config):\n"
                                                                       "    return []\n"}))
    assert message.endswith("whose instances have `async def decide(self, rows, config)`")
    assert hint is not None and hint.endswith('"entry_point": "pipeline:MyMethod" (pipeline.py defines no class)')


async def test_a_factory_function_still_builds_the_method(make_plugin):
    files = {"pipeline.py": ECHO_CLASS + "\n\ndef make_method(directory):\n    return EchoMethod()\n"}
    loaded = load_method(make_plugin({**MANIFEST, "entry_point": "pipeline:make_method"}, files))
    assert type(loaded.method).__name__ != "function"


@pytest.mark.parametrize(("helper", "imported", "place"), [
    ("helpers.py", "import helpers", "helpers.py:2"),
    ("lib/helpers.py", "from lib import helpers", "lib/helpers.py:2"),
])
def test_a_syntax_error_in_an_imported_helper_names_its_file_and_line(make_plugin, helper, imported, place):
    """Before: 'fix the error in pipeline.py', the file that imported it."""
    pipeline = f"{imported}\n\n\n{ECHO_CLASS}"
    directory = make_plugin({**MANIFEST, "entry_point": "pipeline:EchoMethod"},
                            {"pipeline.py": pipeline, helper: "WORD = 1\ndef broken(:\n    pass\n"})
    message, hint = load_problem(directory)
    assert message == 'importing "pipeline" failed: SyntaxError: invalid syntax (helpers.py:2)'
    assert hint is not None and hint.startswith(f"fix the error in {place} (run `")


def test_an_error_raised_in_the_entry_module_names_its_line(make_plugin):
    files = {"pipeline.py": "WORD = 1\nraise RuntimeError('no model')\n"}
    hint = load_problem(make_plugin({**MANIFEST, "entry_point": "pipeline:EchoMethod"}, files))[1]
    assert hint is not None and hint.startswith("fix the error in pipeline.py:2 (run `")


def test_translate_that_is_not_async_names_the_line_of_its_def(make_plugin):
    """Before: only method.json $.entry_point, and the fix 'see the TranslationMethod protocol in the README'."""
    code = "class EchoMethod:\n\n    def translate(self, entries, config):\n        return []\n"
    with pytest.raises(PluginLoadError) as caught:
        load_method(make_plugin({**MANIFEST, "entry_point": "pipeline:EchoMethod"}, {"pipeline.py": code}))
    [problem] = caught.value.problems
    assert (problem.path, problem.message) == (
        "$.entry_point", "EchoMethod.translate is not async: write `async def translate(self, entries, config)`")
    assert problem.hint == "make the `def translate` at pipeline.py:3 `async def translate(self, entries, config)`"


def readme_sections() -> set[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}


@pytest.mark.parametrize(("implements", "hint"), [
    (["translate"], 'see the README: the TranslationMethod protocol in "Writing a method plugin"'),
    (["decide"], 'see the README: the DecisionMethod protocol in "Judging"'),
])
def test_a_protocol_fault_points_at_a_readme_section_that_exists(make_plugin, implements, hint):
    """Before: 'see the TranslationMethod protocol in the README', a section the README does not have."""
    from mt_eval.method_protocol import PROTOCOL_SECTIONS

    manifest = {**MANIFEST, "entry_point": "pipeline:EchoMethod", "implements": implements}
    assert load_problem(make_plugin(manifest, {"pipeline.py": "class EchoMethod:\n    pass\n"}))[1] == hint
    assert {section for _, section in PROTOCOL_SECTIONS.values()} <= readme_sections()


CITATION = re.compile(r"""README(?:'s)?:?\s+\\?"([A-Z][^"\\]*)\\?"|\\?"([A-Z][^"\\]*)\\?"\s+in\s+the\s+README""")


def cited_sections(source: str) -> list[str]:
    """The README sections ``source`` cites by name in its code and messages (comments aside), a message's string
    pieces joined (``f"...; README: " '"Wrapping a translator program"'``)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    code = " ".join(t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE))
    joined = re.sub(r"""(?<=[^\\])["']\s+f?["']""", "", code)  # adjacent string literals as one
    return [a or b for a, b in CITATION.findall(joined)]


def test_every_readme_section_the_sdk_cites_by_name_exists():
    cited = {(str(path.relative_to(REPO)), section) for path in sorted((REPO / "sdk" / "mt_eval").rglob("*.py"))
             for section in cited_sections(path.read_text(encoding="utf-8"))}
    assert ("sdk/mt_eval/adapters/framing.py", "Wrapping a translator program") in cited  # (the search finds them)
    assert [(file, section) for file, section in sorted(cited) if section not in readme_sections()] == []
