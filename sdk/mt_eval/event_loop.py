"""The event loop mt-eval runs methods on: uvloop's where it is installed, else asyncio's.

A round trip through the bridge is mostly the event loop's own work (waking up, reading, scheduling the task
that waits): on uvloop it costs a sequential request about half as much as on asyncio's loop
(``benchmarks/bridge.py``). `mt-eval run`, `mt-eval translate`, the decision sessions and a Python guest
(`mt-eval serve`) run on it; a method that needs asyncio's own loop gets it with
``MT_EVAL_EVENT_LOOP=asyncio``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar, TypeVarTuple

import anyio

from mt_eval.errors import UsageError

T = TypeVar("T")
Args = TypeVarTuple("Args")

CHOICE_VARIABLE = "MT_EVAL_EVENT_LOOP"
CHOICES = ("uvloop", "asyncio")


def use_uvloop() -> bool:
    """Whether to run on uvloop: it is installed and ``MT_EVAL_EVENT_LOOP`` does not say ``asyncio``."""
    choice = os.environ.get(CHOICE_VARIABLE, "").strip().lower() or "uvloop"
    if choice not in CHOICES:
        raise UsageError(f"{CHOICE_VARIABLE}={os.environ[CHOICE_VARIABLE]!r} is not an event loop mt-eval knows: "
                         f"use {' or '.join(CHOICES)}")
    if choice == "asyncio":
        return False
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def run(func: Callable[[*Args], Awaitable[T]], *args: *Args) -> T:
    """``anyio.run(func, *args)`` on the loop this module chooses."""
    return anyio.run(func, *args, backend_options={"use_uvloop": use_uvloop()})


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop of the kind this module chooses (for code that drives a loop itself, in a thread)."""
    if use_uvloop():
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()
