"""Starting a coroutine in the callback that asks for it, as asyncio's eager tasks do (Python 3.12+).

A request that a method answers without waiting for anything is then answered in the same turn of the event
loop that read it: no task is scheduled, and the loop does not go round once more before the method runs. A
coroutine that does suspend carries on as an ordinary task. On Python 3.11 the same is done by stepping the
coroutine once by hand, in a context of its own, and handing the rest to a task.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import types
from collections.abc import Coroutine, Generator
from typing import Any


def start_eagerly(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Run ``coro`` now, up to its first suspension; return the task that carries on from there, or None when it
    finished without suspending (an exception it raised before suspending propagates to the caller)."""
    if sys.version_info >= (3, 12):
        task = asyncio.Task(coro, eager_start=True)  # type: ignore[call-arg,unused-ignore]
        if task.done():
            task.result()  # (raises what the coroutine raised)
            return None
        return task
    context = contextvars.copy_context()
    try:
        yielded = context.run(coro.send, None)
    except StopIteration:
        return None
    return asyncio.get_running_loop().create_task(_carry_on(coro, yielded), context=context)


async def _carry_on(coro: Coroutine[Any, Any, None], yielded: Any) -> None:
    await _resume(coro, yielded)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, None], yielded: Any) -> Generator[Any, Any, None]:
    """Drive a coroutine that has already yielded ``yielded`` to its driver: the task awaits that, then the rest."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # thrown in by the task: cancellation
            try:
                yielded = coro.throw(exc)
            except StopIteration:
                return
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration:
                return
