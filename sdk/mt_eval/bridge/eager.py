"""Starting a coroutine in the callback that asks for it, as asyncio's eager tasks do (Python 3.12+).

A request that a method answers without waiting for anything is then answered in the same turn of the event
loop that read it: no task step is scheduled, and the loop does not go round once more before the method runs.
A coroutine that does suspend carries on as the same task.

Python 3.11 has no eager tasks, and a coroutine stepped by hand outside a task breaks a method that asks for its
task (anyio's cancel scopes and task groups, ``asyncio.timeout``). There the task is made first, around a
`_Rest` of the coroutine, and entered as the loop enters a task it steps; the coroutine's first step then runs
at once, inside that task, as with ``eager_start``. The task's own first step, on the loop's next turn, takes
over from where the coroutine stopped: it waits on what the coroutine waits on (or ends, when the coroutine
already did). This works on any loop (uvloop's too). Where it cannot be done safely (a task factory, another task
running) the task simply starts on the next turn.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Coroutine, Generator
from typing import Any


def start_eagerly(coro: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop | None = None
                  ) -> asyncio.Task[None] | None:
    """Run ``coro`` now, up to its first suspension, on ``loop`` (the running loop: given, it need not be looked
    up); return the task that carries on from there, or None when it finished without suspending (an exception it
    raised before suspending propagates to the caller)."""
    loop = loop or asyncio.get_running_loop()
    if sys.version_info >= (3, 12):
        task = asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
        if task.done():
            task.result()  # (raises what the coroutine raised)
            return None
        return task
    if loop.get_task_factory() is not None or asyncio.current_task(loop) is not None:
        return loop.create_task(coro)
    return _start_now_on_311(coro, loop)


class _Rest(Coroutine[Any, Any, None]):
    """What is left of a coroutine after its first step was run by hand: the task's first step gets what the
    coroutine yielded then (the future it waits on), and every later step goes to the coroutine itself."""

    def __init__(self, coro: Coroutine[Any, Any, None]) -> None:
        self.coro = coro
        self.first: Any = None  # what the coroutine's first step yielded
        self.finished = False  # the first step ended the coroutine
        self.taken = False  # the task took over
        self.__name__ = getattr(coro, "__name__", type(coro).__name__)
        self.__qualname__ = getattr(coro, "__qualname__", self.__name__)

    def send(self, value: Any) -> Any:
        if self.taken:
            return self.coro.send(value)
        self.taken = True
        if self.finished:
            raise StopIteration
        return self.first

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        if not self.taken and asyncio.isfuture(self.first) and _is_cancellation(typ if val is None else val):
            self.first.cancel()  # cancelled before the task's first step: what the coroutine waits on is let go,
            # as the task does with what it waits on
        self.taken = True
        if self.finished:  # nothing left to run
            raise typ if val is None else val
        return self.coro.throw(typ) if val is None and tb is None else self.coro.throw(typ, val, tb)

    def close(self) -> None:
        self.coro.close()

    # What asyncio reads of a task's coroutine to name it and show its stack (``repr(task)``, ``task.get_stack()``,
    # "Task was destroyed but it is pending!"): the coroutine's own.
    @property
    def cr_code(self) -> Any:
        return getattr(self.coro, "cr_code", None)

    @property
    def cr_frame(self) -> Any:
        return getattr(self.coro, "cr_frame", None)

    @property
    def cr_running(self) -> bool:
        return bool(getattr(self.coro, "cr_running", False))

    @property
    def cr_await(self) -> Any:
        return getattr(self.coro, "cr_await", None)

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a _Rest is stepped by its task only")


def _start_now_on_311(coro: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop) -> asyncio.Task[None] | None:
    rest = _Rest(coro)
    context = contextvars.copy_context()
    task: asyncio.Task[None] = loop.create_task(rest, context=context)
    asyncio.tasks._enter_task(loop, task)
    try:
        rest.first = context.run(coro.send, None)
    except StopIteration:
        rest.finished = True
        return None
    except BaseException:
        rest.finished = True
        raise
    finally:
        asyncio.tasks._leave_task(loop, task)
    return task


def _is_cancellation(exc: Any) -> bool:
    """Whether ``exc`` (as ``throw`` is given it: an instance, or a class) is a cancellation."""
    return isinstance(exc, asyncio.CancelledError) or (isinstance(exc, type) and
                                                       issubclass(exc, asyncio.CancelledError))
