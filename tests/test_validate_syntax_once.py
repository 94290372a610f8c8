"""A Python syntax error is one error of `mt-eval validate`, as a JavaScript one is: the import's, which names the
file and line, not that and the static scan's "cannot parse" of the same file."""

from __future__ import annotations

import pytest

from mt_eval.validate import validate_plugin
from sandbox_support import isolation_reason

SANDBOX = [False, pytest.param(True, marks=pytest.mark.skipif(isolation_reason() is not None,
                                                               reason=f"no sandbox here: {isolation_reason()}"))]
GOOD = "class EchoMethod:\n    async def translate(self, entries, config):\n        return []\n"


@pytest.mark.parametrize("sandbox", SANDBOX)
@pytest.mark.parametrize("broken", ["pipeline.py", "helpers.py"])
def test_a_python_syntax_error_is_said_once_with_its_file_and_line(make_plugin, sandbox: bool, broken: str):
    files = {"pipeline.py": ("import helpers\n" + GOOD) if broken == "helpers.py" else "def f(:\n" + GOOD,
             "helpers.py": "def f(:\n    pass\n" if broken == "helpers.py" else "X = 1\n"}
    report = validate_plugin(make_plugin(files=files), sandbox=sandbox)
    [error] = report.errors
    assert (error.code, error.path) == ("entry-point", "$.entry_point")
    assert error.message.endswith(f"SyntaxError: invalid syntax ({broken}:1)"), error.message


def test_without_the_import_the_scan_still_says_it(make_plugin):
    plugin = make_plugin(files={"pipeline.py": "def f(:\n" + GOOD})
    [error] = validate_plugin(plugin, run_code=False).errors
    assert (error.file, error.code) == (f"{plugin / 'pipeline.py'}:1", "unscannable")
