"""A method whose translate returns something other than a list (a generator, a dict, a tuple, None) is told what it
returned and how to return a list instead, in the words a Python author knows: in the process and in a Python guest
alike. A result that names its translation otherwise ("translation", "text", ...) is asked whether it meant
"predicted"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_missing_await import one_result_through_a_python_guest

RETURNS = {
    "generator": ('({"id": e["id"], "predicted": e["source"]} for e in entries)',
                  "the method returned a generator, not a list of results: return a list, e.g. list(...)"),
    "dict": ('{e["id"]: {"predicted": e["source"]} for e in entries}',
             "the method returned a dict, not a list of results: return a list of result dicts, one per entry"),
    "tuple": ('tuple({"id": e["id"], "predicted": e["source"]} for e in entries)',
              "the method returned a tuple, not a list of results: return a list"),
    "None": ("None", "the method returned None, not a list of results: return the list of results (is a return "
                     "statement missing?)"),
}


@pytest.fixture(params=sorted(RETURNS))
def returning(request, make_plugin) -> tuple[Path, str]:
    returned, said = RETURNS[request.param]
    code = f"class M:\n    async def translate(self, entries, config):\n        return {returned}\n"
    plugin = make_plugin({"name": "NotAList", "entry_point": "pipeline:M", "supported_pairs": ["eng>spa"],
                          "dependencies": []}, {"pipeline.py": code})
    return plugin, said


def test_translate_says_what_was_returned_instead_of_a_list(returning: tuple[Path, str]):
    plugin, said = returning
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(plugin), "Hello."],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout == f"[error] {said}\n"


async def test_a_python_guest_says_the_same(returning: tuple[Path, str]):
    plugin, said = returning
    assert (await one_result_through_a_python_guest(plugin))["error"] == said


@pytest.mark.parametrize("field", ["translation", "text", "output", "target", "prediction"])
def test_a_result_without_predicted_is_asked_whether_its_field_meant_predicted(make_plugin, field: str):
    code = ("class M:\n    async def translate(self, entries, config):\n"
            f"        return [{{'id': e['id'], {field!r}: e['source']}} for e in entries]\n")
    plugin = make_plugin({"name": "Misnamed", "entry_point": "pipeline:M", "supported_pairs": ["eng>spa"],
                          "dependencies": []}, {"pipeline.py": code})
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(plugin), "Hello."],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout == ('[error] the method returned an unusable result: a result needs "predicted" or, when the '
                           f'entry failed, "error"; it has "{field}": did you mean "predicted"?\n')
