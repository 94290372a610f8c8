"""What keeps the public bridge path close to the wire: writes held to the end of a turn, slots and the solo
gate that cost one comparison, and entries sent as they are when they carry no gold."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from mt_eval.bridge.answers import entries_to_send
from mt_eval.bridge.slots import Slots
from mt_eval.child_policy import SoloGate
from mt_eval.child_process import WRITE_GROUP, ChildProcess


class _Cat(ChildProcess):
    """``cat`` as a child: each output chunk resolves the future a caller waits on."""

    def __init__(self) -> None:
        super().__init__(["cat"], label="cat")
        self.waiting: asyncio.Future[bytes] | None = None
        self.writes: list[bytes] = []
        self.output = bytearray()  # everything it echoed
        self.echoed = asyncio.Event()  # set on each output chunk

    def on_output(self, data: bytes) -> None:
        self.output += data
        self.echoed.set()
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(data)

    async def spawn(self) -> None:
        await super().spawn()
        stdin: Any = self._stdin
        original = stdin.write

        def recording(data: bytes) -> None:
            self.writes.append(bytes(data))
            original(data)

        stdin.write = recording


async def test_requests_written_in_the_turn_after_an_answer_go_out_in_one_write():
    child = _Cat()
    await child.spawn()
    try:
        loop = asyncio.get_running_loop()
        child.waiting = loop.create_future()
        guard = loop.call_later(5, child.waiting.cancel)  # (awaited directly: wait_for would add a turn)
        child.write(b"first\n")
        assert child.writes == [b"first\n"]  # a lone request waits for nothing
        assert await child.waiting == b"first\n"
        guard.cancel()
        # this task was woken by the answer: what it writes now leaves when the turn ends, together
        child.waiting = loop.create_future()
        child.write(b"second\n")
        child.write(b"third\n")
        assert child.writes == [b"first\n"]
        received = b""
        while received != b"second\nthird\n":
            received += await asyncio.wait_for(child.waiting, 5)
            child.waiting = loop.create_future()
        assert child.writes == [b"first\n", b"second\nthird\n"]
    finally:
        await child.aclose()


async def test_many_writes_held_in_one_turn_go_out_in_groups_the_child_can_start_on():
    child = _Cat()
    await child.spawn()
    try:
        child.write(b"0\n")  # the first write of a turn goes at once; the others are held
        lines = [f"{i}\n".encode() for i in range(1, 2 * WRITE_GROUP + 4)]
        for line in lines:
            child.write(line)
        # every full group left as soon as it was complete, before the turn ended; the rest waits for the end
        assert child.writes == [b"0\n", b"".join(lines[:WRITE_GROUP]), b"".join(lines[WRITE_GROUP:2 * WRITE_GROUP])]
        expected = b"0\n" + b"".join(lines)
        with anyio.fail_after(5):
            while len(child.output) < len(expected):
                child.echoed.clear()
                await child.echoed.wait()
        assert child.output == expected  # nothing lost, nothing reordered
        assert child.writes[-1] == b"".join(lines[2 * WRITE_GROUP:])
    finally:
        await child.aclose()


async def test_slots_admit_at_most_their_count_and_hand_a_slot_to_the_longest_waiter():
    slots = Slots(2)
    assert slots.try_take() and slots.try_take()
    assert not slots.try_take() and slots.in_use == 2
    order: list[str] = []

    async def wait(name: str) -> None:
        await slots.take()
        order.append(name)

    first, second = asyncio.create_task(wait("first")), asyncio.create_task(wait("second"))
    await asyncio.sleep(0)
    slots.give()
    await asyncio.sleep(0)
    assert order == ["first"] and slots.in_use == 2
    slots.give()
    await asyncio.gather(first, second)
    assert order == ["first", "second"]
    with pytest.raises(ValueError):
        Slots(0)


async def test_a_waiter_cancelled_after_it_was_handed_a_slot_passes_it_on():
    slots = Slots(1)
    assert slots.try_take()
    cancelled = asyncio.create_task(slots.take())
    patient = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    slots.give()  # handed to the first waiter…
    cancelled.cancel()  # …which is cancelled before it runs
    await asyncio.wait_for(patient, 5)
    assert cancelled.cancelled() and slots.in_use == 1
    slots.give()
    assert slots.free == 1


async def test_a_cancelled_waiter_leaves_the_queue():
    slots = Slots(1)
    assert slots.try_take()
    waiter = asyncio.create_task(slots.take())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    slots.give()
    assert slots.free == 1 and slots.try_take()


async def test_work_sent_alone_waits_for_shared_work_and_keeps_new_work_out():
    gate = SoloGate()
    assert gate.try_enter_shared()
    entered = asyncio.Event()

    async def alone() -> None:
        async with gate.alone():
            entered.set()
            assert not gate.try_enter_shared()
            await asyncio.sleep(0.01)

    task = asyncio.create_task(alone())
    await asyncio.sleep(0.01)
    assert not entered.is_set()  # shared work is still in flight
    gate.leave_shared()
    await asyncio.wait_for(entered.wait(), 5)
    await asyncio.wait_for(gate.enter_shared(), 5)  # admitted once the solo work is done
    assert task.done()
    gate.leave_shared()


def test_entries_without_gold_are_sent_as_they_are_and_gold_never_leaves():
    plain = [{"id": "1", "source": "a"}, {"id": "2", "source": "b", "domain": "news"}]
    assert entries_to_send(plain) is plain
    with_gold = [{"id": "1", "source": "a"}, {"id": "2", "source": "b", "reference": "B", "references": ["B"]}]
    sent = entries_to_send(with_gold)
    assert sent == [{"id": "1", "source": "a"}, {"id": "2", "source": "b"}]
    assert with_gold[1]["reference"] == "B"  # the caller's entries are left alone
    assert entries_to_send(tuple(plain)) == plain


def test_a_guest_checks_a_config_once_and_hands_each_request_a_copy_of_its_own():
    from mt_eval.bridge.guest_requests import run_config

    first = run_config({"source_lang": "eng", "target_lang": "spa", "params": {"k": 1}})
    first.params["k"] = 2  # a method changing its config…
    first.temperature = 1.0
    second = run_config({"source_lang": "eng", "target_lang": "spa", "params": {"k": 1}})
    assert second is not first and second.params == {"k": 1} and second.temperature is None  # …changes no other
    with pytest.raises(ValueError, match="temperature"):
        run_config({"source_lang": "eng", "target_lang": "spa", "temperature": 9})


async def test_both_guests_advertise_64_calls_at_once(tmp_path):
    import sys
    from pathlib import Path

    from mt_eval.bridge.connection import GuestConnection
    from mt_eval.bridge.runtimes import node_command, python_command

    plugin = tmp_path / "echo"
    plugin.mkdir()
    (plugin / "pipeline.py").write_text("class Echo:\n    async def translate(self, entries, config):\n"
                                        "        return [{'id': e['id'], 'predicted': e['source']} for e in entries]\n")
    (plugin / "translate.js").write_text("export async function translate(entries) {\n"
                                         "  return entries.map((e) => ({ id: e.id, predicted: e.source }));\n}\n")
    (plugin / "method.json").write_text('{"name": "Echo", "entry_point": "pipeline:Echo", "node_entry": "translate.js",'
                                        ' "dependencies": []}')
    for command in (python_command(Path(plugin)), node_command(Path(plugin))):
        connection = GuestConnection(command)
        info = await connection.start({"source_lang": "eng", "target_lang": "spa"})
        await connection.aclose()
        assert info.capabilities.max_concurrency == 64, (command, sys.executable)
