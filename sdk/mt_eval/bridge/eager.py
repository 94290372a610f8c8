"""Starting a coroutine in the callback that asks for it, as asyncio's eager tasks do (Python 3.12+).

A request that a method answers without waiting for anything is then answered in the same turn of the event
loop that read it: no task step is scheduled, and the loop does not go round once more before the method runs.
A coroutine that does suspend carries on as the same task.

Python 3.11 has no eager tasks, and a coroutine stepped by hand outside a task breaks a method that asks for its
task (anyio's cancel scopes and task groups, ``asyncio.timeout``). There the task is created as usual and its
first step, which ``create_task`` put last in the loop's ready queue, is taken out of the queue and run at once:
the coroutine runs inside its own task from its first line, as with ``eager_start``. Where that cannot be done
safely (a task factory, another task running, a loop of another kind) the task simply starts on the next turn.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any


def start_eagerly(coro: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop | None = None
                  ) -> asyncio.Task[None] | None:
    """Run ``coro`` now, up to its first suspension, on ``loop`` (the running loop: given, it need not be looked
    up); return the task that carries on from there, or None when it finished without suspending (an exception it
    raised before suspending propagates to the caller)."""
    loop = loop or asyncio.get_running_loop()
    if sys.version_info >= (3, 12):
        task = asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    else:
        task = _start_now_on_311(coro, loop)
    if task.done():
        task.result()  # (raises what the coroutine raised)
        return None
    return task


def _start_now_on_311(coro: Coroutine[Any, Any, None], loop: asyncio.AbstractEventLoop) -> asyncio.Task[None]:
    ready = getattr(loop, "_ready", None)
    if ready is None or loop.get_task_factory() is not None or asyncio.current_task(loop) is not None:
        return loop.create_task(coro)
    queued = len(ready)
    task = loop.create_task(coro)
    if len(ready) == queued + 1:
        first_step = ready[-1]
        if getattr(first_step._callback, "__self__", None) is task and not first_step.cancelled():
            ready.pop()
            first_step._run()  # the task's own step, in its context: it enters the task, as the loop would
    return task
