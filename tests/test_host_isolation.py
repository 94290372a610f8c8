"""The Python host finds the entry a guest fails on (issue cases 10.2–10.4), with either guest runtime, and says
why it restarts one.

The reverse fixture (tests/fixtures/reverse) raises, exits its process, blocks its event loop or hangs on
the sources that ask it to, identically in Python (`mt-eval serve`) and Node (translate.js).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command, python_command

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
OPTIONS = HostOptions(start_timeout_s=20, shutdown_grace_s=0.5, cancel_grace_s=0.5)
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(params=[pytest.param("python"), pytest.param("node", marks=needs_node)])
async def guest(request: pytest.FixtureRequest) -> AsyncIterator[BridgeMethod]:
    """The reverse fixture as a guest of either runtime (``guest.runtime`` says which), closed afterwards."""
    command = node_command(REVERSE) if request.param == "node" else python_command(REVERSE)
    method = BridgeMethod(command, options=OPTIONS, label=f"reverse-{request.param}")
    method.runtime = request.param  # type: ignore[attr-defined]
    await method.start(config())
    yield method
    await method.aclose()


def entries(*sources: str) -> list[dict[str, str]]:
    return [{"id": f"e{i}", "source": s} for i, s in enumerate(sources)]


def config(timeout_s: float = 30.0) -> dict[str, object]:
    return {"source_lang": "eng", "target_lang": "spa", "timeout_s": timeout_s}


def expected(sources: list[str], failing: int) -> list[str | None]:
    return [None if i == failing else f"spa:{s[::-1]}" for i, s in enumerate(sources)]


async def test_an_entry_that_raises_fails_alone_not_its_batch_mates(guest: BridgeMethod):
    sources = ["one", "two", "!raise", "four", "five"]
    results = await guest.translate(entries(*sources), config())
    assert [r["predicted"] for r in results] == expected(sources, 2)
    assert "asked to raise" in results[2]["error"]
    assert guest.restarts == 0


async def test_a_guest_that_exits_mid_batch_is_restarted_and_only_the_culprit_fails(guest: BridgeMethod):
    sources = ["one", "two", "!exit", "four", "five", "six"]
    results = await guest.translate(entries(*sources), config())
    assert [r["predicted"] for r in results] == expected(sources, 2)
    if guest.runtime == "node":  # type: ignore[attr-defined]  # the fixture ends its process outright: restarted
        assert "exited with code 3" in results[2]["error"] and "exiting on purpose" in results[2]["error"]
    else:  # mt-eval serve catches sys.exit: the guest goes on, the call fails as a raise does
        assert results[2]["error"] == ("the method called sys.exit(3) (pipeline.py:30): a method must not end the "
                                       "process; raise an exception instead")
    # more culprits later in the run: the guest did work before each crash, so no crash-loop budget is spent
    # and the run never degrades into errors
    for _ in range(4):
        again = await guest.translate(entries("seven", "!exit", "nine"), config())
        assert [r["predicted"] for r in again] == ["spa:neves", None, "spa:enin"]
    assert guest.restarts >= (5 if guest.runtime == "node" else 0)  # type: ignore[attr-defined]


async def test_a_crash_after_a_call_that_raised_is_not_explained_by_that_call_s_stack(guest: BridgeMethod):
    """Before: the Node guest's report of the earlier failed call (``mt-eval-guest: translate failed: …`` and the
    kit's own stack frames) stayed in the stderr tail, and the crash's error quoted those frames
    (``| stderr: mt-eval-guest:     at GuestServer.translate (…guest.js:302:17) / … / exiting on purpose``)."""
    node = guest.runtime == "node"  # type: ignore[attr-defined]
    [raised] = await guest.translate(entries("!raise"), config())
    assert raised["error"] == f"the method failed: {'Error' if node else 'RuntimeError'}: asked to raise"
    [exited] = await guest.translate(entries("!exit"), config())
    if node:
        assert exited["error"] == "the guest exited with code 3 | stderr: exiting on purpose"
    else:  # (mt-eval serve turns sys.exit into a failed call)
        assert exited["error"].startswith("the method called sys.exit(3)")


async def test_a_guest_whose_event_loop_is_blocked_is_killed_and_replaced(guest: BridgeMethod):
    started = time.monotonic()
    sources = ["one", "!block 30", "three"]
    results = await guest.translate(entries(*sources), config(timeout_s=0.5))
    assert time.monotonic() - started < 10  # not the 30 s the method blocks for
    assert [r["predicted"] for r in results] == expected(sources, 1)
    assert "got no answer or progress within 0.5 s" in results[1]["error"]
    assert (await guest.translate(entries("later"), config()))[0]["predicted"] == "spa:retal"
    assert guest.restarts >= 1


async def test_requests_stuck_behind_one_that_blocked_the_guest_are_sent_again_not_failed(guest: BridgeMethod):
    """One entry a call, all in flight at once: the requests stuck behind the blocked one time out with it, one by
    one. Before, the last of them to time out was taken for the one the guest failed on, as it was then alone in
    flight, and failed with it."""
    sources = ["one", "!block 30", "three", "four", "five"]
    calls = [guest.translate([entry], config(timeout_s=0.5)) for entry in entries(*sources)]  # (as the harness does)
    results = [result for [result] in await asyncio.gather(*calls)]
    assert [r["predicted"] for r in results] == expected(sources, 1), [r["error"] for r in results]


async def test_a_hanging_entry_times_out_alone(guest: BridgeMethod):
    sources = ["one", "!hang", "three"]
    results = await guest.translate(entries(*sources), config(timeout_s=0.4))
    assert [r["predicted"] for r in results] == expected(sources, 1)
    assert "got no answer or progress within 0.4 s" in results[1]["error"]


# Answers, then ends its process from a timer, saying why on stderr: the guest dies with nothing in flight. (An error
# thrown from a timer is logged and the guest serves on, as the Python guest does: this one ends the process outright.)
DIES_LATER = """export async function translate(entries) {
  setTimeout(() => { console.error('Error: dying, after answering'); process.reallyExit(1); }, 10);
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
"""


@needs_node
async def test_a_guest_that_dies_between_calls_is_restarted_saying_why(tmp_path: Path, caplog):
    caplog.set_level(logging.WARNING, logger="mt_eval.bridge")
    (tmp_path / "translate.js").write_text(DIES_LATER)
    (tmp_path / "method.json").write_text('{"name": "Dies later", "node_entry": "translate.js"}')
    method = BridgeMethod(node_command(tmp_path), options=OPTIONS, label="later")
    try:
        for source in ("one", "two"):
            [result] = await method.translate(entries(source), config())
            assert result["predicted"] == source
            for _ in range(100):  # until the guest has died
                if not method._connection.alive:  # type: ignore[union-attr]
                    break
                await asyncio.sleep(0.02)
    finally:
        await method.aclose()
    restarts = [r.getMessage() for r in caplog.records if r.getMessage().startswith("restarting guest later")]
    assert restarts[0].startswith("restarting guest later (restart 1) after: the guest exited with code 1 | stderr: ")
    assert "Error: dying, after answering" in restarts[0]


CRASHES_ON_TRANSLATE = """\
import json, subprocess, sys
subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"protocol_version": "mt-eval-bridge/1",
              "method": {"name": "Crashy", "method_id": "crashy"}, "card": None, "capabilities": {},
              "guest": {"name": "crashy", "version": "0", "runtime": "python"}}}), flush=True)
    elif message.get("method") == "translate":
        sys.exit("out of memory")
"""


async def test_a_guest_replaced_after_a_crash_leaves_nothing_it_started_running(tmp_path: Path):
    """Before: only the last guest's process group was ended; each guest replaced after a crash left its helper
    running (two sleeps here)."""
    from process_support import marked_environment, processes_marked

    (tmp_path / "guest.py").write_text(CRASHES_ON_TRANSLATE)
    marker, environment = marked_environment()
    method = BridgeMethod([sys.executable, str(tmp_path / "guest.py")], env=environment, options=OPTIONS,
                          label="crashy")
    try:
        results = await method.translate(entries("one", "two"), config())
    finally:
        await method.aclose()
    assert [result.get("predicted") for result in results] == [None, None]
    assert method.restarts == 2
    for _ in range(100):
        if not processes_marked(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_marked(marker) == []
