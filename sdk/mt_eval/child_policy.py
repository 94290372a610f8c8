"""What the owner of a child process holds it to: `RestartBudget`, the crash-loop budget it restarts the child
within, and `SoloGate`, how work is sent to the child alone after a failure (`mt_eval.child_process` is the child
itself). Used by the bridge host (`mt_eval.bridge.method`) and the translator-program adapters."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class RestartBudget:
    """Unplanned restarts allowed: at most ``restarts`` within any ``window_s`` seconds.

    Only a restart after a child that completed no work is charged: a child that answered something and
    then failed (on one bad record, say) is not in a crash loop, and the record it failed on fails alone.
    """

    def __init__(self, restarts: int, window_s: float) -> None:
        self.restarts = restarts
        self.window_s = window_s
        self._charged: deque[float] = deque()

    def allow(self, *, productive: bool = False) -> bool:
        """Whether one more restart is allowed now; charges it unless the child it replaces was productive."""
        if productive:
            return True
        now = asyncio.get_running_loop().time()
        while self._charged and self._charged[0] < now - self.window_s:
            self._charged.popleft()
        if len(self._charged) >= self.restarts:
            return False
        self._charged.append(now)
        return True

    def describe(self) -> str:
        return f"{self.restarts} restarts within {self.window_s:g} s"


class SoloGate:
    """Work passes through `shared` together, except work that must be `alone` with a child: that waits
    until nothing else is in flight and keeps the rest out until it is done. After a child failed with
    several things in flight, sending each of them alone tells the one it fails on from the others.

    `enter_shared` and `leave_shared` are the same as `shared` without a context manager, for the hot path:
    entering costs one check while nothing is sent alone."""

    def __init__(self) -> None:
        self._solo = asyncio.Lock()
        self._active = 0
        self._idle: asyncio.Future[None] | None = None  # what work sent alone waits on until nothing is in flight

    def try_enter_shared(self) -> bool:
        """Enter at once, unless something is being sent alone (then `enter_shared`)."""
        if self._solo._locked:  # type: ignore[attr-defined]  # (Lock.locked(), without the call)
            return False
        self._active += 1
        return True

    async def enter_shared(self) -> None:
        while self._solo.locked():  # something is being sent alone: wait until it is done
            async with self._solo:
                pass
        self._active += 1

    def leave_shared(self) -> None:
        self._active -= 1
        if not self._active and self._idle is not None and not self._idle.done():
            self._idle.set_result(None)

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        await self.enter_shared()
        try:
            yield
        finally:
            self.leave_shared()

    @asynccontextmanager
    async def alone(self) -> AsyncIterator[None]:
        async with self._solo:
            while self._active:
                self._idle = asyncio.get_running_loop().create_future()
                try:
                    await self._idle
                finally:
                    self._idle = None
            yield
