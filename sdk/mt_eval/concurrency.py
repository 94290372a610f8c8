"""Structured concurrency, the one way the SDK runs several things at once (README, *One async style*).

`all_of` runs one call per item in an anyio task group and returns the results in the items' order. Nothing
outlives it: when a call raises, the others are cancelled and the exception propagates — unwrapped when it is
the only one, as an exception group otherwise — so no task is left running behind the caller's back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio

Item = TypeVar("Item")
Result = TypeVar("Result")


async def all_of(call: Callable[[Item], Awaitable[Result]], items: Iterable[Item]) -> list[Result]:
    """``[await call(item) for item in items]``, the calls running concurrently."""
    todo = list(items)
    results: list[Result | None] = [None] * len(todo)

    async def one(index: int, item: Item) -> None:
        results[index] = await call(item)

    try:
        async with anyio.create_task_group() as group:
            for index, item in enumerate(todo):
                group.start_soon(one, index, item)
    except BaseExceptionGroup as failed:
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None
        raise
    return results  # type: ignore[return-value]  # every slot was filled
