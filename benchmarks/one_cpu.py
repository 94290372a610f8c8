"""Sequential round trips are timed with both ends on one CPU: the baseline's pair of processes and ours alike.

On a machine whose idle CPUs sleep (a virtual machine's above all), a reply that wakes a process waiting on
another, idle CPU takes tens of microseconds longer than one that wakes it on the CPU it runs on, and the
scheduler places a pair of processes once and mostly keeps them there. Unpinned, on 2 cores, the bare
pipe's sequential p50 came out at ~20–35 µs or at ~75 µs depending on where its pair landed, and ours
independently of it: the same code measured 0.86× in one run and 3.84× in the next. With every process of
both pairs on one CPU the figures repeat. Throughput figures (many requests in flight) use every CPU.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress


def _threads(pid: int) -> list[int]:
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:  # ended meanwhile
        return []


def descendants(pid: int) -> list[int]:
    """The processes started by ``pid``, by their children, and so on (from /proc)."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _pin(cpus: set[int]) -> None:
    """Every thread of this process and of its descendants on ``cpus``."""
    me = os.getpid()
    for pid in [me, *descendants(me)]:
        for tid in _threads(pid):
            with suppress(OSError):  # ended meanwhile
                os.sched_setaffinity(tid, cpus)


@contextmanager
def one_cpu() -> Iterator[int | None]:
    """Inside the block, this process, the processes it started (and those they start) and all their threads
    run on one CPU, the first this process may use (yielded); after it, on every CPU this process could use
    before. Where CPU affinity cannot be set (not Linux), nothing changes and None is yielded."""
    if not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task"):
        yield None
        return
    before = os.sched_getaffinity(0)
    cpu = min(before)
    _pin({cpu})
    try:
        yield cpu
    finally:
        _pin(before)
