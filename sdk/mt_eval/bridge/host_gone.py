"""A Python guest whose input has ended finishes its work within a bound, and ends even while its method blocks
the event loop.

A guest ends when its stdin closes: the event loop reads the end of the input, finishes what is in flight (for up
to `FINISH_S` from a pipe: `finish_in_flight`) and closes the method (`mt_eval.bridge.guest.GuestServer`). A
method that blocks the loop (a long synchronous call inside
``async def translate``) keeps that from happening; and when the host was killed (SIGKILL, the out-of-memory
killer), nobody will ever stop the guest, which runs on with no parent. So a thread waits for the host's end of
stdin to close (``poll`` reports the hang-up without reading anything), and if the guest is still there
`ORPHAN_GRACE_S` later — longer than an orderly end takes, finishing and the method's ``aclose()`` included — it
says so on stderr and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import sys
import threading
from collections.abc import Collection, Iterator

from mt_eval.background_threads import BackgroundThread
from mt_eval.guarded_calls import CLOSE_TIMEOUT_S

FINISH_S = 5.0  # how long requests in flight as a pipe's input ends may run on before they are cancelled
ORPHAN_GRACE_S = FINISH_S + CLOSE_TIMEOUT_S + 5.0


async def finish_in_flight(tasks: Collection[asyncio.Task[None]], *, bounded: bool) -> None:
    """Wait for the requests in flight as the input ended: each is answered (a reader gone drops the answer), as
    the Node guest does. From a pipe (``bounded``) a call still running after `FINISH_S` is cancelled, saying so on
    stderr: whoever closed the input will not wait for ever. (Not gathered: Ctrl-C meanwhile waits for no call
    that ignores it.)"""
    if not tasks:
        return
    _, running = await asyncio.wait(tasks, timeout=FINISH_S if bounded else None)
    if running:
        print(f"mt-eval serve: the input ended and {len(running)} request(s) did not finish within {FINISH_S:g} s: "
              "cancelled", file=sys.stderr, flush=True)
        for task in running:
            task.cancel()
        await asyncio.wait(running)


@contextlib.contextmanager
def host_watched(input_fd: int, watch: bool = True) -> Iterator[None]:
    """While inside (serving), the host's end of ``input_fd`` is watched (when ``watch``: a host, not a file)."""
    served = watch_host(input_fd) if watch else None
    try:
        yield
    finally:
        if served is not None:
            served.set()


def watch_host(input_fd: int, *, grace_s: float = ORPHAN_GRACE_S) -> threading.Event:
    """From now on, the process exits ``grace_s`` after the writer of ``input_fd`` (the host) is gone, unless the
    event returned is set first (the guest ended as it should: then nothing happens)."""
    served = threading.Event()
    if hasattr(select, "poll"):  # (not on Windows)
        BackgroundThread(target=_watch, args=(input_fd, grace_s, served), name="mt-eval serve: host watch",
                         daemon=True).start()
    return served


def _watch(input_fd: int, grace_s: float, served: threading.Event) -> None:
    from mt_eval.process_exit import real_exit

    poller = select.poll()
    poller.register(input_fd, 0)  # no event asked for: only a hang-up (or an error) is reported
    try:
        while not poller.poll(1000):
            if served.is_set():
                return
    except (OSError, ValueError):  # the descriptor was closed: the guest is ending anyway
        return
    if served.wait(grace_s):
        return
    with contextlib.suppress(OSError, ValueError):  # (a host that read stderr through a pipe took that pipe along)
        sys.stderr.write(f"mt-eval serve: the host closed the guest's input {grace_s:g} s ago and the method has "
                         "not returned (it blocks the event loop): exiting\n")
        sys.stderr.flush()
    real_exit(1)
