"""What a command leaves running when it is done: a method's processes and threads never keep it from ending.

A method loaded in this process may start a child process (a model server, ``subprocess.Popen``) or a thread
that it never stops. When the command is done, a child process it left would live on with no parent, and a
thread that is not a daemon would keep Python from exiting: the command printed its result and then hung for
ever. So, once the command has its exit status (`leave`), each child process still running is ended (SIGTERM,
then SIGKILL after `GRACE_S`) and named in one warning line; and when Python's own shutdown is still waiting for
a thread `GRACE_S` later, a line names the thread and the process exits without it. Nothing the command did is
lost: its files are written and its output flushed before either happens. Only the ``mt-eval`` program does this
(`mt_eval.cli.console_main`); ``mt_eval.cli.main`` called in a process of one's own leaves it alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

GRACE_S = 5.0


def leave(status: int, prog: str = "mt-eval") -> NoReturn:
    """End the process with ``status``: left processes ended, left threads not waited for (see the module)."""
    left = running_children()
    if left:
        names = ", ".join(f"pid {pid}: {command}" for pid, command in left)
        noun = "process" if len(left) == 1 else "processes"
        print(f"{prog}: warning: {len(left)} {noun} started in this command {'was' if len(left) == 1 else 'were'} "
              f"still running at its end ({names}); ended {'it' if len(left) == 1 else 'them'} (a method stops what "
              "it starts in aclose())", file=sys.stderr, flush=True)
        end_processes([pid for pid, _ in left])
    watcher = threading.Thread(target=_exit_if_held, args=(status, prog), name="mt-eval exit watch", daemon=True)
    watcher.start()
    sys.exit(status)


def _exit_if_held(status: int, prog: str) -> None:
    """Runs while Python's shutdown joins the threads that are not daemons: past `GRACE_S`, exits without them."""
    time.sleep(GRACE_S)
    held = [t for t in threading.enumerate() if t.is_alive() and not t.daemon and t is not threading.main_thread()]
    if not held:
        return
    names = ", ".join(repr(t.name) for t in held)
    noun = "thread" if len(held) == 1 else "threads"
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        print(f"{prog}: warning: {len(held)} {noun} started in this command ({names}) still ran {GRACE_S:g} s after "
              f"its end; exited without waiting for {'it' if len(held) == 1 else 'them'} (a method stops its "
              "threads in aclose(), or makes them daemon threads)", file=sys.stderr, flush=True)
    os._exit(status)


def running_children() -> list[tuple[int, str]]:
    """This process's child processes that are still running (not zombies), with their command lines; the
    helpers Python's multiprocessing starts for itself, which end with this process, are left out. Empty where
    /proc cannot tell."""
    found: list[tuple[int, str]] = []
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:
        return found
    pids: set[int] = set()
    for task in tasks:
        with contextlib.suppress(OSError, ValueError):
            pids.update(int(word) for word in (task / "children").read_text().split())
    for pid in sorted(pids):
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat[stat.rindex(")") + 2:].startswith(("Z", "X")):
                continue
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            if "multiprocessing." in command:
                continue
            found.append((pid, command[:80] or stat[stat.index("(") + 1:stat.rindex(")")]))
    return found


def end_processes(pids: list[int]) -> None:
    """SIGTERM to each, then SIGKILL to those still there after `GRACE_S`; each is reaped."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere
                done = pid
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(0.02)
    for pid in waiting:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
