"""`LazyTimer`: one loop timer serving many deadlines (requests to a guest, records to a translator program), on
asyncio's loop and on uvloop's, whatever the deadlines."""

from __future__ import annotations

import asyncio

import pytest

from mt_eval.child_process import LazyTimer


def run(loop_name: str, coroutine):
    if loop_name == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        return uvloop.run(coroutine)
    return asyncio.run(coroutine)


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
@pytest.mark.parametrize("first_in_s", [0.0, 1e-300, 1e-4, -1.0])
def test_a_deadline_armed_for_at_once_then_others_fires_once_for_the_earliest(loop_name: str, first_in_s: float):
    """Before: uvloop arms a time under 0.5 ms away with call_soon's plain Handle, which has no when(), so the next
    deadline raised AttributeError — a bridge request with a --timeout that small crashed the call and left its
    future's error unretrieved ("Future exception was never retrieved" on stderr)."""
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        fired: list[float] = []
        timer = LazyTimer(lambda: fired.append(loop.time()))
        start = loop.time()
        timer.ensure(start + first_in_s)
        timer.ensure(start + 5.0)  # later: the earlier one stands
        timer.ensure(start + first_in_s / 2)  # earlier still (or the same): re-armed
        await asyncio.sleep(0.05)
        return [when - start for when in fired]

    fired = run(loop_name, main())
    assert len(fired) == 1 and fired[0] < 0.05


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_a_later_deadline_costs_nothing_and_an_earlier_one_re_arms(loop_name: str):
    async def main() -> tuple[list[float], bool]:
        loop = asyncio.get_running_loop()
        fired: list[float] = []
        timer = LazyTimer(lambda: fired.append(loop.time() - start))
        start = loop.time()
        timer.ensure(start + 0.2)
        timer.ensure(start + 0.3)
        timer.ensure(start + 0.02)
        await asyncio.sleep(0.1)
        early = list(fired)
        timer.ensure(loop.time() + 0.02)
        timer.cancel()
        await asyncio.sleep(0.15)
        return early, fired == early

    early, nothing_after_cancel = run(loop_name, main())
    assert len(early) == 1 and 0.015 <= early[0] < 0.1
    assert nothing_after_cancel
