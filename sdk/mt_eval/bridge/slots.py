"""`Slots`: at most N at once, like `asyncio.Semaphore`, with a taking that costs one comparison while a slot is
free (the bridge's hot path takes and gives one per request)."""

from __future__ import annotations

import asyncio
from collections import deque


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
