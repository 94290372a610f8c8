"""A method served by the Python guest runs in a task of its own, so that what asks for its task works there as
in-process: ``asyncio.timeout``, anyio's cancel scopes and task groups (Python 3.11 has no eager tasks)."""

from __future__ import annotations

from pathlib import Path

from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import python_command
from mt_eval.records import RunConfig

NEEDS_ITS_TASK = '''
import asyncio

import anyio


class EchoMethod:
    async def translate(self, entries, config):
        async with asyncio.timeout(5):
            with anyio.fail_after(5):
                async with anyio.create_task_group() as group:
                    group.start_soon(anyio.sleep, 0)
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
'''


async def test_a_method_that_asks_for_its_task_is_served(make_plugin):
    directory: Path = make_plugin(files={"pipeline.py": NEEDS_ITS_TASK})
    guest = BridgeMethod(python_command(directory), label="needs its task")
    try:
        results = await guest.translate([{"id": "1", "source": "hello"}, {"id": "2", "source": "world"}],
                                        RunConfig(source_lang="eng", target_lang="spa"))
    finally:
        await guest.aclose()
    assert [(r["predicted"], r["error"]) for r in results] == [("HELLO", None), ("WORLD", None)]
