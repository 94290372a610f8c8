"""What a child's processes are doing, read from ``/proc`` (Linux; elsewhere nothing is known): whether one of
them is blocked reading its standard input — it has taken everything it was sent and waits for more — and which
children of this process still run, with what they started (`running_children`, `descendants`, for
`mt_eval.cli.leftovers`).

That tells apart two silences: a program working on what it was sent (busy, or waiting on something else),
and a program that read it and answered nothing — a plain text filter that buffers its output, or one that
answers only at the end of its input. Both the adapters (`mt_eval.adapters`) and the bridge host's start
(`mt_eval.bridge.not_a_guest`) use it to say which, early and precisely.
"""

from __future__ import annotations

import os
import platform

# the read(2) system call's number, as /proc/PID/syscall shows it, on the architectures Linux runs on
READ_SYSCALL = {"x86_64": 0, "aarch64": 63, "riscv64": 63, "i386": 3, "i686": 3, "armv7l": 3, "ppc64le": 3,
                "s390x": 3}


def group_members(group: int) -> list[int]:
    """The processes of process group ``group`` (a child started in its own session leads one)."""
    members = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == group:
            members.append(int(name))
    return members


def reads_stdin(pid: int, *, single_threaded: bool = False) -> bool:
    """Whether process ``pid`` is blocked in read() on its standard input (``single_threaded``: and has one
    thread only, so that no other thread of it can be working)."""
    number = READ_SYSCALL.get(platform.machine())
    if number is None:
        return False
    try:
        if single_threaded:
            with open(f"/proc/{pid}/status", encoding="utf-8") as status:
                threads = next((line.split()[1] for line in status if line.startswith("Threads:")), "0")
            if threads != "1":
                return False
        with open(f"/proc/{pid}/syscall", encoding="ascii") as syscall:
            fields = syscall.read().split()
    except (OSError, StopIteration, UnicodeDecodeError):
        return False
    return len(fields) > 1 and fields[0] == str(number) and int(fields[1], 16) == 0


def group_reads_stdin(group: int | None, *, single_threaded: bool = False) -> bool:
    """Whether some process of group ``group`` is blocked reading its standard input (see `reads_stdin`)."""
    if group is None:
        return False
    return any(reads_stdin(pid, single_threaded=single_threaded) for pid in group_members(group))


# the system calls that wait for any of several inputs (poll, select, epoll: maybe for standard input), by architecture
WAIT_SYSCALLS = {"x86_64": {7, 23, 232, 270, 271, 281, 441}, "aarch64": {22, 72, 73, 441},
                 "riscv64": {22, 72, 73, 441}}


def group_busy(group: int | None) -> bool:
    """Whether every process of group ``group`` is known to be working on something: none of their threads is
    blocked reading its standard input or waiting in poll, select or epoll (where it may be waiting for its input).
    False where that cannot be known (not Linux, an architecture not listed, a thread's state unreadable)."""
    read, waits = READ_SYSCALL.get(platform.machine()), WAIT_SYSCALLS.get(platform.machine(), set())
    members = group_members(group) if group is not None and waits else []
    for pid in members:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return False
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/syscall", encoding="ascii") as syscall:
                    fields = syscall.read().split()
            except FileNotFoundError:  # (the thread ended meanwhile)
                continue
            except (OSError, UnicodeDecodeError):
                return False
            if not fields:
                return False
            if fields[0] in ("running", "-1"):  # on a CPU, or stopped outside a system call
                continue
            number = int(fields[0])
            if number in waits or (number == read and len(fields) > 1 and int(fields[1], 16) == 0):
                return False
    return bool(members)


# The guests mt-eval's own bridge host started (a method it runs in a process of its own: --isolate, a Node entry):
# not what a method left running. One that a second Ctrl-C kept from closing is ended at exit without blaming the
# method (`mt_eval.cli.leftovers`).
HOST_GUESTS: set[int] = set()


def running_children() -> list[tuple[int, str]]:
    """This process's child processes that still run (not zombies), with their command lines (or names); the
    helpers Python's multiprocessing starts for itself, which end with this process, are left out."""
    found: list[tuple[int, str]] = []
    for child in sorted(_children("self")):
        command = command_line(child, limit=None)
        stat = _stat(child)
        if command is None or stat is None or "multiprocessing." in command:  # (None: it ended meanwhile)
            continue
        found.append((child, _shortened(command) or stat[stat.index("(") + 1:stat.rindex(")")]))
    return found


def command_line(pid: int, *, limit: int | None = 80) -> str | None:
    """The command line of process ``pid`` (its arguments joined by spaces; shortened to ``limit`` characters with
    "…" when longer), or None once it has ended."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    return command if limit is None else _shortened(command, limit)


def _shortened(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and those they started, that still run (parents before children)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        children = [child for child in sorted(_children(pending.pop())) if runs(child)]
        found += children
        pending += children
    return found


def outside_group(pid: int | None) -> list[tuple[int, str]]:
    """What ``pid`` started, at any depth, that left its process group (``setsid``: Node's ``detached``, Python's
    ``start_new_session``), which a signal to the group does not reach: each process with its start time, to know
    it again (`same_process`)."""
    found = []
    for child in descendants(pid) if pid is not None else ():
        stat = _stat(child)
        if stat is not None:
            fields = stat[stat.rindex(")") + 2:].split()
            if len(fields) > 19 and int(fields[2]) != pid:  # (pgrp, and starttime: fields 5 and 22 of stat)
                found.append((child, fields[19]))
    return found


def same_process(pid: int, started: str) -> bool:
    """Whether ``pid`` still runs and is the process that started at ``started`` (not a later one given its pid)."""
    stat = _stat(pid)
    return stat is not None and stat[stat.rindex(")") + 2:].split()[19:20] == [started]


def runs(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie has ended)."""
    return _stat(pid) is not None


def _children(pid: int | str) -> set[int]:
    pids: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return pids
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                pids.update(int(word) for word in listed.read().split())
        except (OSError, ValueError):
            continue
    return pids


def _stat(pid: int) -> str | None:
    """The /proc stat line of ``pid`` while it runs; None once it ended or is a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            stat = stat_file.read()
    except OSError:
        return None
    return None if stat[stat.rindex(")") + 2:].startswith(("Z", "X")) else stat
