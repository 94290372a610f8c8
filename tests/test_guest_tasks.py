"""A method served by the Python guest runs in a task of its own, so that what asks for its task works there as
in-process: ``asyncio.timeout``, anyio's cancel scopes and task groups. It starts at once, in the loop's turn that
read its request (as an eager task does), so a method that does not wait is answered in that same turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.bridge.guest import GuestServer
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


class _Written:
    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.lines.extend(line for line in data.split(b"\n") if line)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


class _Recorder:
    """Answers at once, or after waiting once when the entry says so; notes the task it ran in at each step."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, Any]] = []

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        self.tasks.append(("start", asyncio.current_task()))
        if entries[0]["source"] == "wait":
            await asyncio.sleep(0)
            self.tasks.append(("after waiting", asyncio.current_task()))
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]


def _request(request_id: int, source: str) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "method": "translate", "params": {
        "entries": [{"id": "a", "source": source}], "config": {"source_lang": "eng", "target_lang": "spa"}}}) + b"\n"


async def test_a_method_starts_in_the_turn_that_read_its_request_inside_its_own_task():
    method = _Recorder()
    server = GuestServer(method, name="recorder", method_id="recorder", card=None)
    out = server._out = _Written()
    loop = asyncio.get_running_loop()
    answered_in_turn: list[int] = []
    started_in_turn: list[str] = []
    read = loop.create_future()

    def on_input() -> None:  # as the stdin pipe's callback runs: outside any task
        server.on_data(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_versions":'
                       b'["mt-eval-bridge/1"]}}\n' + _request(1, "now") + _request(2, "wait"))
        answered_in_turn.append(len(out.lines))
        started_in_turn.extend(name for name, _ in method.tasks)
        read.set_result(None)

    loop.call_soon(on_input)
    await read
    assert answered_in_turn == [2]  # initialize and the request that did not wait, before the callback returned
    assert started_in_turn == ["start", "start"]  # the one that waits started too
    assert all(task is not None for _, task in method.tasks)
    started_waiting = method.tasks[1][1]
    for _ in range(10):  # the waiting one is answered a few turns later
        await asyncio.sleep(0)
    assert method.tasks[2] == ("after waiting", started_waiting)  # the same task carried on after waiting
    answers = [msgspec.json.decode(line) for line in out.lines]
    assert [(a["id"], a["result"]["results"][0]["predicted"]) for a in answers[1:]] == [(1, "now"), (2, "wait")]
    assert server._tasks == {}
