"""`mt_eval.concurrency.all_of`, the one way the SDK runs calls at once: results in order, nothing outlives it."""

from __future__ import annotations

import anyio
import pytest

from mt_eval.concurrency import all_of


async def test_results_come_in_the_items_order_while_the_calls_run_at_once():
    running = most = 0

    async def slower_first(n: int) -> int:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await anyio.sleep(0.01 * (5 - n))
        running -= 1
        return n * n

    assert await all_of(slower_first, range(5)) == [0, 1, 4, 9, 16]
    assert most == 5
    assert await all_of(slower_first, []) == []


async def test_a_failing_call_cancels_the_others_and_its_exception_is_raised_as_itself():
    finished: list[int] = []
    cancelled: list[int] = []

    async def call(n: int) -> int:
        if n == 2:
            raise ValueError("entry 2 is bad")
        try:
            await anyio.sleep(5)
        except anyio.get_cancelled_exc_class():
            cancelled.append(n)
            raise
        finished.append(n)
        return n

    with anyio.fail_after(2), pytest.raises(ValueError, match="entry 2 is bad"):
        await all_of(call, range(4))
    assert finished == [] and sorted(cancelled) == [0, 1, 3]


async def test_several_failures_are_raised_together():
    async def call(n: int) -> int:
        with anyio.CancelScope(shield=True):  # each fails, even once the first failure cancels the rest
            await anyio.sleep(0.01)
        raise KeyError(n)

    with pytest.raises(ExceptionGroup) as caught:
        await all_of(call, range(3))
    assert sorted(exc.args[0] for exc in caught.value.exceptions) == [0, 1, 2]
