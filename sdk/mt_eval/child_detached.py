"""What a child started outside its process group (``setsid``: Node's ``detached``, Python's
``start_new_session``), which a signal to the group does not reach.

Such a process is known as the child's own only while the child runs: once the child ends, it is adopted by
init and nothing links it to the child any more. So `DetachedWatch` looks for them while the child runs — as
it writes its output: after each of its first `CHECK_FIRST` writes (a program detaches its helpers as it starts
or serves its first requests), then after every `CHECK_EVERY`-th — and again when it is closed; `end_strays` ends
those that still run then, naming them. A program that detaches a helper and later exits on its own leaves
nothing behind."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

import anyio

from mt_eval.process_state import command_line, outside_group, same_process

CHECK_FIRST = 8  # (a look costs about 50 µs: an Apertium pipeline has 13 programs)
CHECK_EVERY = 1024  # writes between two looks, after the first ones (counting costs a request next to nothing)
# How long what a child started outside its group may take to end on its own once the child is gone, before it is
# called left behind: a sandbox's own process (bubblewrap's, in a session of its own) dies with the sandbox, a
# moment after it.
STRAY_SETTLE_S = 0.5


class DetachedWatch:
    """The processes a child started outside its group, each with its start time (`same_process`)."""

    __slots__ = ("seen", "writes")

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}
        self.writes = 0

    def due(self) -> bool:
        """Whether to look after the child's latest write: each of its first `CHECK_FIRST`, then every
        `CHECK_EVERY`-th."""
        self.writes += 1
        return self.writes <= CHECK_FIRST or self.writes % CHECK_EVERY == 0

    def look(self, pid: int | None) -> None:
        self.seen.update(outside_group(pid))

    def all(self, pid: int | None) -> list[tuple[int, str]]:
        """Those seen so far and those there now (read before the child is stopped)."""
        self.look(pid)
        return list(self.seen.items())


async def end_strays(strays: list[tuple[int, str]], grace: float, label: str, logger: logging.Logger) -> None:
    """End what a child started outside its process group (`process_state.outside_group`, read before the child
    was stopped) that still runs: SIGTERM, SIGKILL after ``grace``; say so, naming them."""
    left = [(pid, started) for pid, started in strays if same_process(pid, started)]
    loop = asyncio.get_running_loop()
    settled = loop.time() + min(grace, STRAY_SETTLE_S)
    while left and loop.time() < settled:  # ending already: a sandbox's own process, dying with the sandbox
        await anyio.sleep(0.01)
        left = [(pid, started) for pid, started in left if same_process(pid, started)]
    if not left:
        return
    names = ", ".join(f"pid {pid}: {command_line(pid) or '?'}" for pid, _ in left)
    logger.warning("%s left %d process%s running outside its process group (%s): ended (a method stops what it "
                   "starts when it is closed)", label, len(left), "" if len(left) == 1 else "es", names)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, started in left:
            if same_process(pid, started):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        until = loop.time() + grace
        while loop.time() < until:
            if not any(same_process(pid, started) for pid, started in left):
                return
            await anyio.sleep(0.02)


