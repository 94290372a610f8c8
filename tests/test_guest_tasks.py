"""A method served by the Python guest runs in a task of its own, so that what asks for its task works there as
in-process: ``asyncio.timeout``, anyio's cancel scopes and task groups. It starts at once, in the loop's turn that
read its request (as an eager task does), so a method that does not wait is answered in that same turn."""

from __future__ import annotations

import asyncio
import contextvars
from pathlib import Path
from typing import Any

import msgspec
import pytest

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


def _run_on(loop_name: str, coroutine: Any) -> Any:
    if loop_name == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        return uvloop.run(coroutine)
    return asyncio.run(coroutine)


def _initialize() -> bytes:
    return b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_versions":["mt-eval-bridge/1"]}}\n'


def _in_a_callback(chunk: bytes, server: GuestServer, then: Any = None) -> Any:
    """A future set once ``server`` has read ``chunk`` as the stdin pipe's callback does (outside any task), with
    what ``then()`` saw right after it."""
    loop = asyncio.get_running_loop()
    read = loop.create_future()

    def on_input() -> None:
        server.on_data(chunk)
        read.set_result(then() if then is not None else None)

    loop.call_soon(on_input)
    return read


async def _starts_in_the_turn_that_read_it() -> None:
    method = _Recorder()
    server = GuestServer(method, name="recorder", method_id="recorder")
    out = server._out = _Written()
    answered_in_turn, started_in_turn = await _in_a_callback(
        _initialize() + _request(1, "now") + _request(2, "wait"), server,
        lambda: (len(out.lines), [name for name, _ in method.tasks]))
    assert answered_in_turn == 2  # initialize and the request that did not wait, before the callback returned
    assert started_in_turn == ["start", "start"]  # the one that waits started too
    assert all(task is not None for _, task in method.tasks)
    started_waiting = method.tasks[1][1]
    assert server._tasks == {2: started_waiting}
    assert "GuestServer.translate()" in repr(started_waiting)  # named, and its stack shown, as its own coroutine
    assert [frame.f_code.co_name for frame in started_waiting.get_stack()] == ["translate"]
    for _ in range(10):  # the waiting one is answered a few turns later
        await asyncio.sleep(0)
    assert method.tasks[2] == ("after waiting", started_waiting)  # the same task carried on after waiting
    answers = [msgspec.json.decode(line) for line in out.lines]
    assert [(a["id"], a["result"]["results"][0]["predicted"]) for a in answers[1:]] == [(1, "now"), (2, "wait")]
    assert server._tasks == {}


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_a_method_starts_in_the_turn_that_read_its_request_inside_its_own_task(loop_name):
    _run_on(loop_name, _starts_in_the_turn_that_read_it())


_STEP: contextvars.ContextVar[str] = contextvars.ContextVar("step", default="unset")


class _Waiter:
    """Sets a context variable, then waits (for ever, unless cancelled); notes what it saw."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        _STEP.set(entries[0]["source"])
        try:
            await asyncio.sleep(0 if entries[0]["source"] == "brief" else 3600)
        except asyncio.CancelledError:
            self.seen.append("cancelled")
            raise
        self.seen.append(_STEP.get())
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]


async def _cancelled_before_its_task_stepped() -> None:
    method = _Waiter()
    server = GuestServer(method, name="waiter", method_id="waiter")
    out = server._out = _Written()
    cancel = b'{"jsonrpc":"2.0","method":"cancel","params":{"id":1}}\n'
    await _in_a_callback(_initialize() + _request(1, "long") + cancel + _request(2, "brief"), server)
    for _ in range(10):
        await asyncio.sleep(0)
    answers = {a["id"]: a for a in (msgspec.json.decode(line) for line in out.lines)}
    assert answers[1]["error"]["message"] == "cancelled"  # the method itself saw the cancellation
    assert answers[2]["result"]["results"][0]["predicted"] == "brief"
    assert method.seen == ["cancelled", "brief"]  # what it set before waiting was still set after it
    assert _STEP.get() == "unset"  # and only in its own task's context
    assert server._tasks == {}


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_a_request_cancelled_in_the_turn_that_started_it_is_answered_cancelled(loop_name):
    _run_on(loop_name, _cancelled_before_its_task_stepped())
