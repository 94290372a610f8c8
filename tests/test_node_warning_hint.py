"""A Node method's stderr, attached to what its failure says, keeps Node's warning and drops the hint that follows it
(``(Use `node --trace-warnings ...` to show where the warning was created)``: a command line nobody running the
method types)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval import load_method

HINT = "(Use `node --trace-warnings"
WARNING = 'Warning: To load an ES module, set "type": "module" in the package.json or use the .mjs extension.'


@pytest.fixture
def es_module_as_commonjs(tmp_path: Path) -> Path:
    """A Node method written as an ES module under a package.json that says "type": "commonjs"."""
    (tmp_path / "method.json").write_text(json.dumps({"name": "Cjs", "node_entry": "translate.js",
                                                      "supported_pairs": ["eng>spa"], "dependencies": []}))
    (tmp_path / "package.json").write_text('{"type": "commonjs"}')
    (tmp_path / "translate.js").write_text("export async function translate(entries) { return []; }\n")
    return tmp_path


async def test_an_entry_failed_by_it_carries_the_warning_without_the_hint(es_module_as_commonjs: Path):
    method = load_method(es_module_as_commonjs).method
    try:
        [result] = await method.translate([{"id": "1", "source": "Hello."}], {"source_lang": "eng",
                                                                               "target_lang": "spa"})
    finally:
        await method.aclose()
    error = result["error"]
    assert error.endswith(WARNING) and "| stderr: (node:" in error, error
    assert HINT not in error


def test_translate_says_the_warning_without_the_hint(es_module_as_commonjs: Path):
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(es_module_as_commonjs), "Hello."],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    said = done.stderr[done.stderr.index("mt-eval translate: "):]  # (before it: what the guest printed, as it did)
    assert "  guest stderr (last lines):\n    (node:" in said and f"{WARNING}\n  fix: " in said, said
    assert HINT not in said
