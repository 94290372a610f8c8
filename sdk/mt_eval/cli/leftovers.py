"""What a command leaves running when it is done: a method's processes and threads never keep it from ending.

A method loaded in this process may start a child process (a model server, ``subprocess.Popen``) or a thread
that it never stops. When the command is done, a child process it left would live on with no parent, and a
thread that is not a daemon would keep Python from exiting: the command printed its result and then hung for
ever. So, once the command has its exit status (`leave`), each child process still running is ended (SIGTERM,
then SIGKILL after `GRACE_S`) and named in one warning line; and when Python's own shutdown is still waiting for
a thread `GRACE_S` later, a line names the thread and the process exits without it. Nothing the command did is
lost: its files are written and its output flushed before either happens. Only the ``mt-eval`` program does this
(`mt_eval.cli.console_main`), and only when a method's code (or an extension's) was imported into it;
``mt_eval.cli.main`` called in a process of one's own leaves it alone.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

GRACE_S = 5.0
# (only os and sys at import: every `mt-eval` pays for what this module imports, `mt-eval --help` too)


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
    if _held():
        import threading

        threading.Thread(target=_exit_if_held, args=(status, prog), name="mt-eval exit watch", daemon=True).start()
    sys.exit(status)


def _held() -> list[Any]:
    """The threads Python's shutdown would wait for: alive, not daemons, not the main thread."""
    threading = sys.modules.get("threading")
    if threading is None:  # never imported: no thread was started
        return []
    return [t for t in threading.enumerate() if t.is_alive() and not t.daemon and t is not threading.main_thread()]


def _exit_if_held(status: int, prog: str) -> None:
    """Runs while Python's shutdown joins the threads that are not daemons: past `GRACE_S`, exits without them."""
    import time

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
        os._exit(status)


def running_children() -> list[tuple[int, str]]:
    """This process's child processes that are still running (not zombies), with their command lines; the
    helpers Python's multiprocessing starts for itself, which end with this process, are left out. Empty where
    /proc cannot tell."""
    pids: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as listed:
                pids.update(int(word) for word in listed.read().split())
        except (OSError, ValueError):
            continue
    found: list[tuple[int, str]] = []
    for pid in sorted(pids):
        try:
            with open(f"/proc/{pid}/stat") as stat_file:
                stat = stat_file.read()
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it ended meanwhile
            continue
        if stat[stat.rindex(")") + 2:].startswith(("Z", "X")) or "multiprocessing." in command:
            continue
        found.append((pid, command[:80] or stat[stat.index("(") + 1:stat.rindex(")")]))
    return found


def end_processes(pids: list[int]) -> None:
    """SIGTERM to each, then SIGKILL to those still there after `GRACE_S`; each is reaped."""
    import contextlib
    import signal
    import time

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
