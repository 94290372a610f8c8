"""Starting a coroutine in the callback that asks for it, as asyncio's eager tasks do (Python 3.12+).

A request that a method answers without waiting for anything is then answered in the same turn of the event
loop that read it: no task is scheduled, and the loop does not go round once more before the method runs. A
coroutine that does suspend carries on as an ordinary task. Python 3.11 has no eager tasks, and a coroutine
stepped by hand outside a task breaks a method that asks for its task (anyio's cancel scopes and task groups,
``asyncio.timeout``): there the coroutine is an ordinary task from the start.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
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
    return asyncio.get_running_loop().create_task(coro)
