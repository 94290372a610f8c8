"""A call cancelled after its answer arrived, but before it resumed (Ctrl-C at that moment, with a Node guest in a
third of the tries) sends the guest no cancel: it answers none for a request it answered, and the host waited out
the grace, then said "it did not answer the cancel of request N … (is its event loop blocked?)"."""

from __future__ import annotations

import asyncio
import sys

from mt_eval.bridge.connection import GuestConnection

CONFIG = {"source_lang": "eng", "target_lang": "spa"}
# answers initialize, and never a translate: the test gives the answer itself, at the moment it needs
GUEST = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"protocol_version": "mt-eval-bridge/1",
              "method": {"name": "Quiet", "method_id": "quiet"}, "capabilities": {"cancel": True}}}), flush=True)
"""


async def _cancelled_after_its_answer() -> tuple[bool, bool]:
    connection = GuestConnection([sys.executable, "-c", GUEST])
    await connection.start(CONFIG)
    try:
        call = asyncio.create_task(connection.request("translate", {"entries": [{"id": "a", "source": "x"}],
                                                                    "config": CONFIG}))
        await asyncio.sleep(0)  # (it runs until it waits for its answer: sent)
        [pending] = [p for p in connection._pending.values() if p.method == "translate"]
        pending.future.set_result({"results": []})  # its answer arrived...
        call.cancel()  # ...and the caller was cancelled before it resumed
        await asyncio.gather(call, return_exceptions=True)
        answered_cancel = bool(connection._cancelling)
        stopped = not connection.alive
        return answered_cancel, stopped
    finally:
        await connection.aclose()


def test_a_call_cancelled_after_its_answer_sends_no_cancel():
    assert asyncio.run(_cancelled_after_its_answer()) == (False, False)


async def _cancelled_while_waiting() -> bool:
    connection = GuestConnection([sys.executable, "-c", GUEST])
    await connection.start(CONFIG)
    try:
        call = asyncio.create_task(connection.request("translate", {"entries": [{"id": "a", "source": "x"}],
                                                                    "config": CONFIG}))
        await asyncio.sleep(0.05)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        return bool(connection._cancelling)
    finally:
        await connection.aclose()


def test_a_call_cancelled_while_it_waits_still_cancels_its_request():
    assert asyncio.run(_cancelled_while_waiting()) is True
