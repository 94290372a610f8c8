"""`mt_eval.deadlines.within`: a deadline a method cannot swallow, and `mt_eval.event_loop.run`, which closes its
loop without waiting for ever for a task that ignores cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from mt_eval import event_loop
from mt_eval.deadlines import CANCEL_GRACE_S, Overran, within


async def swallows() -> None:
    while True:
        with contextlib.suppress(asyncio.CancelledError):  # (every time)
            await asyncio.sleep(100)


async def awaits_in_finally() -> None:
    try:
        await asyncio.sleep(100)
    finally:
        await asyncio.sleep(100)


def timed(call) -> tuple[BaseException | object, float, float]:
    """What ``event_loop.run(call)`` gave (or raised), its wall-clock and CPU seconds."""
    started, cpu = time.monotonic(), time.process_time()
    try:
        outcome: BaseException | object = event_loop.run(call)
    except BaseException as exc:  # (what the call raised is what is checked)
        outcome = exc
    return outcome, time.monotonic() - started, time.process_time() - cpu


def test_what_the_call_returns_or_raises_is_the_callers_its_own_timeout_error_and_sys_exit_included():
    async def answer() -> int:
        return 42

    async def raises(error: BaseException) -> None:
        raise error

    assert event_loop.run(within, 1.0, answer) == 42
    assert event_loop.run(within, None, answer) == 42
    mistaken = TimeoutError("the method's own")
    with pytest.raises(TimeoutError) as raised:
        event_loop.run(within, 1.0, lambda: raises(mistaken))
    assert raised.value is mistaken and not isinstance(raised.value, Overran)
    with pytest.raises(SystemExit) as exited:
        event_loop.run(within, 1.0, lambda: raises(SystemExit(3)))
    assert exited.value.code == 3


def test_a_call_that_swallows_cancellation_is_abandoned_after_the_grace_and_nothing_waits_for_it():
    outcome, took, busy = timed(lambda: within(0.2, swallows))
    assert isinstance(outcome, Overran) and outcome.abandoned
    assert outcome.said("timed out after 0.2 s").startswith("timed out after 0.2 s, and the method did not stop "
                                                             "when cancelled: it catches CancelledError")
    assert outcome.said("timed out after 0.2 s").endswith("; run it with --isolate so it can be killed")
    assert outcome.said("timed out", "let it propagate").endswith("so the call was left running; let it propagate")
    assert 0.2 + CANCEL_GRACE_S <= took < 0.2 + CANCEL_GRACE_S + 1.5  # the loop's shutdown did not wait for it
    assert busy < 0.5  # re-cancelled ten times a second, not on every turn of the loop


def test_a_call_that_awaits_in_finally_is_cancelled_again_and_times_out():
    outcome, took, _ = timed(lambda: within(0.2, awaits_in_finally))
    assert isinstance(outcome, Overran) and not outcome.abandoned
    assert outcome.said("timed out after 0.2 s") == "timed out after 0.2 s"
    assert took < 0.2 + CANCEL_GRACE_S


def test_a_cancelled_caller_cancels_the_call_and_abandons_it_when_it_will_not_stop():
    async def cancelled_soon() -> str:
        async def caller() -> None:
            await within(None, swallows)

        task = asyncio.get_running_loop().create_task(caller())
        await asyncio.sleep(0.2)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "not cancelled"

    outcome, took, _ = timed(cancelled_soon)
    assert outcome == "cancelled" and took < 0.2 + CANCEL_GRACE_S + 1.5
