"""A method whose translate returns a coroutine (an ``await`` left out before the call that made it) is told so,
in the process and in a Python guest alike: it was "returned an object", with Python's "coroutine … was never
awaited" warning beside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval import load_method

NO_AWAIT = """\
import asyncio


class M:
    async def _go(self, entries):
        await asyncio.sleep(0)
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]

    async def translate(self, entries, config):
        return self._go(entries)
"""
SAID = ("the method returned a coroutine, never awaited (an await missing before a call in translate?), not a list "
        "of results")


@pytest.fixture
def plugin(make_plugin) -> Path:
    return make_plugin({"name": "NoAwait", "entry_point": "pipeline:M", "supported_pairs": ["eng>spa"],
                        "dependencies": []}, {"pipeline.py": NO_AWAIT})


def test_translate_says_an_await_is_missing_and_python_warns_of_nothing(plugin: Path):
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "mt_eval.cli", "translate",
                           str(plugin), "Hello."], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout == f"[error] {SAID}\n"
    assert "never awaited" not in done.stderr and "RuntimeWarning" not in done.stderr


async def one_result_through_a_python_guest(plugin: Path) -> dict:
    """The result of one entry translated by ``plugin`` run in a Python guest (``--isolate``)."""
    method = load_method(plugin, isolate=True).method
    try:
        [result] = await method.translate([{"id": "1", "source": "Hello."}], {"source_lang": "eng",
                                                                               "target_lang": "spa"})
    finally:
        await method.aclose()
    return result


async def test_a_python_guest_says_the_same(plugin: Path):
    assert (await one_result_through_a_python_guest(plugin))["error"] == SAID
