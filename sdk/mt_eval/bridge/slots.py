"""`Slots`: at most N at once, like `asyncio.Semaphore`, with a taking that costs one comparison while a slot is
free (the bridge's hot path takes and gives one per request); and `within_declared_concurrency`, an in-process
method held to the calls at once it declares."""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from typing import Any

from mt_eval.method_protocol import declared_max_concurrency


class Slots:
    """``count`` slots; `try_take` takes one if it is free and nobody waits, `take` waits for one, `give` returns
    it (to the longest waiter first)."""

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError("a slot count is at least 1")
        self.count = count
        self.free = count
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_take(self) -> bool:
        if self.free and not self._waiters:
            self.free -= 1
            return True
        return False

    async def take(self) -> None:
        if self.try_take():
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot, then cancelled: pass it on
                self.give()
            else:
                self._waiters.remove(waiter)
            raise

    def give(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot goes to the waiter directly
                return
        self.free += 1

    @property
    def in_use(self) -> int:
        return self.count - self.free


class WithinDeclaredConcurrency:
    """An in-process method that declares ``capabilities = {"max_concurrency": N}``, its ``translate`` and ``decide``
    calls made no more than N at once (the others wait their turn); every other attribute is the method's own."""

    def __init__(self, method: Any, count: int) -> None:
        self._method = method
        self._slots = Slots(count)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._method, name)
        if name not in ("translate", "decide") or not callable(found):
            return found

        @functools.wraps(found)
        async def one_of_n(*args: Any, **kwargs: Any) -> Any:
            if not self._slots.try_take():
                await self._slots.take()
            try:
                return await found(*args, **kwargs)
            finally:
                self._slots.give()
        return one_of_n


def within_declared_concurrency(method: Any) -> Any:
    """``method``, gated to the calls at once it declares (`WithinDeclaredConcurrency`); as it is when it declares
    none."""
    count = declared_max_concurrency(method)
    return method if count is None else WithinDeclaredConcurrency(method, count)
