"""What a command leaves running when it is done: a method's processes and threads never keep it from ending.

A method loaded in this process may start a child process (a model server, ``subprocess.Popen``) or a thread
that it never stops. When the command is done, a child process it left would live on with no parent, and a
thread that is not a daemon would keep Python from exiting: the command printed its result and then hung for
ever. So, once the command has its exit status (`leave`), each child process still running is ended with every
process it started (SIGTERM, then SIGKILL after `GRACE_S`; read from /proc, `mt_eval.process_state`) and named in
one warning line; and when Python's own shutdown is still waiting for
a thread `GRACE_S` later, a line names the thread and the process exits without it. Nothing the command did is
lost: its files are written and its output flushed before either happens. Only the ``mt-eval`` program does this
(`mt_eval.cli.console_main`), and only when a method's code (or an extension's) was imported into it or it
adopted what a program it started detached (`mt_eval.process_exit.adopt_orphans`: a guest of ``bridge check``);
``mt_eval.cli.main`` called in a process of one's own leaves it alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import NoReturn

from mt_eval.background_threads import BackgroundThread
from mt_eval.process_exit import real_exit
from mt_eval.process_state import HOST_GUESTS, descendants, running_children, runs

GRACE_S = 5.0


def leave(status: int, prog: str = "mt-eval") -> NoReturn:
    """End the process with ``status``: left processes ended, left threads not waited for (see the module)."""
    children = running_children()
    own = [pid for pid, _ in children if pid in HOST_GUESTS]  # (a guest a second Ctrl-C kept from closing)
    left = [(pid, command) for pid, command in children if pid not in HOST_GUESTS]
    if own:
        end_processes(own)
    if left:
        names = ", ".join(f"pid {pid}: {command}" for pid, command in left)
        noun = "process" if len(left) == 1 else "processes"
        print(f"{prog}: warning: {len(left)} {noun} started in this command {'was' if len(left) == 1 else 'were'} "
              f"still running at its end ({names}); ended {'it' if len(left) == 1 else 'them'} (a method stops what "
              "it starts in aclose())", file=sys.stderr, flush=True)
        end_processes([pid for pid, _ in left])
    if _held():
        BackgroundThread(target=_exit_if_held, args=(status, prog), name="mt-eval exit watch", daemon=True).start()
    sys.exit(status)


def _held() -> list[threading.Thread]:
    """The threads Python's shutdown would wait for: alive, not daemons, not the main thread."""
    return [t for t in threading.enumerate() if t.is_alive() and not t.daemon and t is not threading.main_thread()]


def _exit_if_held(status: int, prog: str) -> None:
    """Runs while Python's shutdown joins the threads that are not daemons: past `GRACE_S`, exits without them."""
    time.sleep(GRACE_S)
    held = _held()
    if not held:
        return
    names = ", ".join(repr(t.name) for t in held)
    noun = "thread" if len(held) == 1 else "threads"
    try:
        sys.stdout.flush()
        print(f"{prog}: warning: {len(held)} {noun} started in this command ({names}) still ran {GRACE_S:g} s after "
              f"its end; exited without waiting for {'it' if len(held) == 1 else 'them'} (a method stops its "
              "threads in aclose(), or makes them daemon threads)", file=sys.stderr, flush=True)
    finally:
        real_exit(status)


def end_processes(pids: list[int]) -> None:
    """SIGTERM to each of ``pids`` (children of this process) and to every process they started, then SIGKILL to
    those still there after `GRACE_S`; the children are reaped."""
    tree = [member for pid in pids for member in (pid, *descendants(pid))]  # (read before any parent ends)
    for member in tree:
        with contextlib.suppress(OSError):
            os.kill(member, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    waiting = set(tree)
    while waiting and time.monotonic() < deadline:
        for member in list(waiting):
            if member in pids:
                with contextlib.suppress(ChildProcessError):
                    if not os.waitpid(member, os.WNOHANG)[0]:
                        continue
            elif runs(member):
                continue
            waiting.discard(member)
        if waiting:
            time.sleep(0.02)
    for member in waiting:
        with contextlib.suppress(OSError):
            os.kill(member, signal.SIGKILL)
            if member in pids:
                os.waitpid(member, 0)
