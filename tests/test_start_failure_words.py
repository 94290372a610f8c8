"""A method that cannot start: each entry's error is one line (a Node module's code frame included), and
``mt-eval translate`` says the failure before printing anything, without suggesting to try ``mt-eval translate``."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from mt_eval import load_method

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@needs_node
async def test_an_entry_of_a_node_method_with_a_syntax_error_carries_its_error_on_one_line(make_plugin):
    plugin = make_plugin({"name": "Broken", "node_entry": "translate.js", "supported_pairs": ["eng>spa"],
                          "dependencies": []},
                         {"translate.js": "export async function translate(entries) {\n  return [;\n}\n"},
                         name="broken")
    method = load_method(plugin).method
    try:
        [result] = await method.translate([{"id": "1", "source": "Hello."}],
                                          {"source_lang": "eng", "target_lang": "spa"})
    finally:
        await method.aclose()
    assert result["error"] == ("guest broken failed to start: cannot load the method: translate.js:2: SyntaxError: "
                               "Unexpected token ';' / return [;; fix: correct the syntax there (`node --check FILE` "
                               "checks a file)")


@pytest.fixture
def exits(make_plugin) -> subprocess.CompletedProcess[str]:
    """``mt-eval translate`` of a blank line and a sentence with a method whose program exits as it starts."""
    plugin = make_plugin({"name": "Exits", "method_id": "exits", "class": "custom-plugin", "dependency_class": "S",
                          "command": [sys.executable, "-c", "raise SystemExit(3)"], "dependencies": [],
                          "supported_pairs": ["eng>spa"]})
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(plugin), "", "Hello."],
                          capture_output=True, text=True, timeout=120)


def test_translate_says_a_start_failure_before_printing_any_line(exits: subprocess.CompletedProcess[str]):
    assert (exits.returncode, exits.stdout) == (1, "")  # (not the blank line of the blank input first)
    assert exits.stderr.startswith("mt-eval translate: exits cannot start: guest exits failed to start: the guest "
                                   "exited with code 3\n"), exits.stderr


def test_translates_start_failure_fix_does_not_suggest_trying_translate(exits: subprocess.CompletedProcess[str]):
    fix = exits.stderr.splitlines()[-1]
    assert fix.endswith(" load and answer initialize (`mt-eval bridge check` for a command)"), fix
    assert "try `mt-eval translate" not in exits.stderr
