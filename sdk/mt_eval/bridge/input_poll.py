"""A guest polls its input for a moment after it answers, before it goes back to sleep in the event loop.

A caller that makes one call after another sends its next request a few microseconds after it reads an answer.
A guest that is asleep by then is woken by the kernel, and on a virtual machine with an idle CPU that wake-up
costs tens of microseconds, more than the rest of the round trip (``benchmarks/bridge.py``). So a guest with
nothing left in flight reads its input without blocking for up to ``MT_EVAL_GUEST_POLL_US`` microseconds (200
by default, 0 turns it off) and takes a request that arrives meanwhile at once. The Node guest does the same
(``bridge/node/lib/input-poll.js``). The cost is that CPU time, spent only when the guest has just answered
everything it was asked.

A guest that may run on one CPU only (its affinity: ``taskset``, a one-CPU machine) does not poll: its host can
then run only while the guest is not running, so polling would delay the very request it waits for. The affinity
is looked at again every `RECHECK_S`, since it can change while the guest runs (``taskset -p``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from mt_eval.errors import UsageError

VARIABLE = "MT_EVAL_GUEST_POLL_US"
DEFAULT_MICROSECONDS = 200
MAX_MICROSECONDS = 10_000
RECHECK_S = 1.0


def poll_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """How long a guest polls its input after answering everything, from ``MT_EVAL_GUEST_POLL_US``;
    `UsageError` for a value that is not a whole number of microseconds from 0 to 10,000."""
    given = environ.get(VARIABLE, "").strip()
    if not given:
        return DEFAULT_MICROSECONDS / 1e6
    if not given.isdigit() or int(given) > MAX_MICROSECONDS:
        raise UsageError(f"{VARIABLE}={environ[VARIABLE]!r} is not a number of microseconds from 0 to "
                         f"{MAX_MICROSECONDS:,}: it is how long a guest polls its input after answering "
                         f"(default {DEFAULT_MICROSECONDS}; 0 turns polling off)")
    return int(given) / 1e6


def can_poll(fd: int) -> bool:
    """Whether ``fd`` can be polled: reading it when it is empty fails at once instead of waiting."""
    try:
        return not os.get_blocking(fd)
    except (OSError, AttributeError):  # (no os.get_blocking on Windows before Python 3.12)
        return False


def poll_input(fd: int, seconds: float) -> bytes:
    """What arrives on the non-blocking ``fd`` within ``seconds``: b"" when nothing did, and at the end of the
    input or on an error, which the event loop's own reading then finds and reports."""
    clock, read = time.perf_counter, os.read
    deadline = clock() + seconds
    while True:
        try:
            return read(fd, 1 << 16)
        except BlockingIOError:
            if clock() >= deadline:
                return b""
        except OSError:
            return b""


def usable_cpus() -> int:
    """How many CPUs this process may run on: its affinity where the system has one, else the CPUs there are."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (no affinity outside Linux and a few others)
        return os.cpu_count() or 1


class PollWorth:
    """Whether polling can win anything now: not when this process may run on one CPU only (see the module
    docstring). ``cpus`` counts them (`usable_cpus` when not given); it is asked again after `RECHECK_S`."""

    def __init__(self, cpus: Callable[[], int] | None = None) -> None:
        self._cpus = cpus
        self._worth = True
        self._recheck_at = 0.0

    def __call__(self) -> bool:
        now = time.monotonic()
        if now >= self._recheck_at:
            self._recheck_at = now + RECHECK_S
            self._worth = (self._cpus or usable_cpus)() > 1
        return self._worth
