"""The event loop mt-eval runs methods on: uvloop's where it is installed, else asyncio's.

A round trip through the bridge is mostly the event loop's own work (waking up, reading, scheduling the task
that waits): on uvloop it costs a sequential request about half as much as on asyncio's loop
(``benchmarks/bridge.py``). `mt-eval run`, `mt-eval translate`, the decision sessions and a Python guest
(`mt-eval serve`) run on it; a method that needs asyncio's own loop gets it with
``MT_EVAL_EVENT_LOOP=asyncio``.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar, TypeVarTuple

from mt_eval.errors import UsageError

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
Args = TypeVarTuple("Args")

CHOICE_VARIABLE = "MT_EVAL_EVENT_LOOP"
CHOICES = ("uvloop", "asyncio")


def chosen() -> str:
    """The loop ``MT_EVAL_EVENT_LOOP`` asks for (``uvloop`` when unset); `UsageError` for one mt-eval does not know.
    Cheap (nothing is imported): the command line checks it before any work."""
    choice = os.environ.get(CHOICE_VARIABLE, "").strip().lower() or "uvloop"
    if choice not in CHOICES:
        raise UsageError(f"{CHOICE_VARIABLE}={os.environ[CHOICE_VARIABLE]!r} is not an event loop mt-eval knows: "
                         f"use {' or '.join(CHOICES)}")
    return choice


def use_uvloop() -> bool:
    """Whether to run on uvloop: it is installed and ``MT_EVAL_EVENT_LOOP`` does not say ``asyncio``."""
    if chosen() == "asyncio":
        return False
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def run(func: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
    """``anyio.run(func, *args)`` on the loop this module chooses."""
    import anyio

    return anyio.run(func, *args, backend_options={"use_uvloop": use_uvloop()})


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop of the kind this module chooses (for code that drives a loop itself, in a thread)."""
    if use_uvloop():
        import uvloop

        return uvloop.new_event_loop()
    import asyncio

    return asyncio.new_event_loop()
