"""The Python host finds the entry a guest fails on (issue cases 10.2–10.4), with either guest runtime.

The misbehaving method (tests/fixtures/misbehaving-method) raises, exits its process or blocks its event
loop on the sources that ask it to, identically in Python (`mt-eval serve`) and Node (translate.js).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command

MISBEHAVING = Path(__file__).parent / "fixtures" / "misbehaving-method"
OPTIONS = HostOptions(start_timeout_s=20, shutdown_grace_s=0.5, cancel_grace_s=0.5)
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def method(runtime: str) -> BridgeMethod:
    command = node_command(MISBEHAVING) if runtime == "node" else python_command(MISBEHAVING)
    return BridgeMethod(command, options=OPTIONS, label=f"misbehaving-{runtime}")


def entries(*sources: str) -> list[dict[str, str]]:
    return [{"id": f"e{i}", "source": s} for i, s in enumerate(sources)]


def config(timeout_s: float = 30.0) -> dict[str, object]:
    return {"source_lang": "eng", "target_lang": "spa", "timeout_s": timeout_s}


RUNTIMES = [pytest.param("python"), pytest.param("node", marks=needs_node)]


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_an_entry_that_raises_fails_alone_not_its_batch_mates(runtime: str):
    guest = method(runtime)
    try:
        results = await guest.translate(entries("one", "two", "!raise", "four", "five"), config())
        assert [r["predicted"] for r in results] == ["spa:eno", "spa:owt", None, "spa:ruof", "spa:evif"]
        assert "asked to raise" in results[2]["error"]
        assert guest.restarts == 0
    finally:
        await guest.aclose()


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_guest_that_exits_mid_batch_is_restarted_and_only_the_culprit_fails(runtime: str):
    guest = method(runtime)
    try:
        sources = ["one", "two", "!exit", "four", "five", "six"]
        results = await guest.translate(entries(*sources), config())
        assert [r["predicted"] for r in results] == ["spa:eno", "spa:owt", None, "spa:ruof", "spa:evif", "spa:xis"]
        if runtime == "node":  # process.exit ends the guest; it is restarted
            assert "exited with code 3" in results[2]["error"] and "exiting on purpose" in results[2]["error"]
        else:  # mt-eval serve catches sys.exit: the guest goes on, the call fails as a raise does
            assert results[2]["error"] == ("the method called sys.exit(3) (pipeline.py:22): a method must not end the "
                                           "process; raise an exception instead")
        # a second culprit later in the run: the guest did work before each crash, so no crash-loop budget
        # is spent and the run never degrades into errors
        for _ in range(4):
            again = await guest.translate(entries("seven", "!exit", "nine"), config())
            assert [r["predicted"] for r in again] == ["spa:neves", None, "spa:enin"]
        assert guest.restarts >= (5 if runtime == "node" else 0)
    finally:
        await guest.aclose()


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_guest_whose_event_loop_is_blocked_is_killed_and_replaced(runtime: str):
    guest = method(runtime)
    try:
        await guest.start(config())
        started = time.monotonic()
        results = await guest.translate(entries("one", "!block 30", "three"), config(timeout_s=0.5))
        print(results)
        assert time.monotonic() - started < 10  # not the 30 s the method blocks for
        assert [r["predicted"] for r in results] == ["spa:eno", None, "spa:eerht"]
        assert "got no answer or progress within 0.5 s" in results[1]["error"]
        assert (await guest.translate(entries("later"), config()))[0]["predicted"] == "spa:retal"
        assert guest.restarts >= 1
    finally:
        await guest.aclose()


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_hanging_entry_times_out_alone(runtime: str):
    guest = method(runtime)
    try:
        results = await guest.translate(entries("one", "!hang", "three"), config(timeout_s=0.4))
        assert [r["predicted"] for r in results] == ["spa:eno", None, "spa:eerht"]
        assert "got no answer or progress within 0.4 s" in results[1]["error"]
    finally:
        await guest.aclose()
