"""One process at a time in a run directory: its lock (`mt_eval.locks.RunDirectoryLock`, ``flock`` on
``DIR/.lock``), shared by ``mt-eval run`` and ``mt-eval decide run``.

`RunDirectoryHold` takes the lock as soon as another process can be holding it: when ``--out`` names a directory
that has a lock file, before the corpus is read and the method loaded, so that a second run on a directory in use
is refused (or waits, with ``--wait``) at once, not after loading a model that takes memory from the run holding
it. A directory with no lock file yet, which no run holds, is locked once the run is about to use it, so a run
refused before then leaves nothing behind.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import TracebackType

from mt_eval.errors import InterruptedBefore
from mt_eval.harness.outcome import EXIT_BUSY
from mt_eval.harness.run_directory import RunError
from mt_eval.locks import Busy, RunDirectoryLock


class RunDirectoryHold:
    """``with RunDirectoryHold(out, ...) as hold: ...; lock = hold.take(directory)``: the lock of ``out`` (the
    ``--out`` given, or None) taken on entering when another process can be holding it, then handed on by
    `take`. Anything raised before that releases it, and Ctrl-C (while loading, or waiting for the directory with
    ``--wait``) is said as ``nothing_done`` (e.g. "nothing was translated") with what became of the directory."""

    def __init__(self, out: Path | None, *, command: str, wait_s: float | None, prog: str, nothing_done: str,
                 resume: bool = False) -> None:
        self.out = out
        self.resume = resume  # (a resume locks a lock file it may only read: a complete run needs no writing)
        self.command = command
        self.wait_s = wait_s
        self.prog = prog
        self.nothing_done = nothing_done
        self._early: RunDirectoryLock | None = None

    def __enter__(self) -> RunDirectoryHold:
        if self.out is not None and os.path.lexists(self.out / RunDirectoryLock.FILE):
            try:
                self._early = self._hold(self.out)
            except KeyboardInterrupt as exc:
                raise self._interrupted() from exc
        return self

    def take(self, out: Path) -> RunDirectoryLock:
        """The lock of ``out``, the run's directory: the one taken on entering (never twice: a second ``flock``
        of this process would find the directory busy with itself), or taken now."""
        self.out = out
        early, self._early = self._early, None
        if early is not None and early.directory == out:
            return early
        if early is not None:
            early.release()
        return self._hold(out)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._early is not None:  # (raised before `take`)
            self._early.release()
            self._early = None
        if isinstance(value, KeyboardInterrupt) and not isinstance(value, InterruptedBefore):  # (one says its own)
            raise self._interrupted() from value

    def _hold(self, out: Path) -> RunDirectoryLock:
        return hold_run_directory(out, command=self.command, wait_s=self.wait_s, prog=self.prog, resume=self.resume)

    def _interrupted(self) -> InterruptedBefore:
        out = self.out
        left = "no run directory was written" if out is None or not out.exists() else f"{out} was left as it was"
        return InterruptedBefore(f"\n{self.prog}: interrupted before the run started: {self.nothing_done}, and {left}")


def hold_run_directory(out: Path, *, command: str, wait_s: float | None, prog: str,
                       resume: bool = False) -> RunDirectoryLock:
    """Take the run directory's lock (``with hold_run_directory(...):``); raises `mt_eval.locks.Busy` when
    another process holds it and ``wait_s`` (None: do not wait) passes first. ``resume``: a lock file that
    only reads is locked as it is (`mt_eval.harness.run_directory.open_run_directory` refuses a resume with
    anything to write there)."""
    lock = RunDirectoryLock(out, command=command)
    _refuse_odd_lock_file(out, lock.path)
    try:
        return lock.acquire(wait_s=wait_s, read_only=resume,
                            on_wait=lambda busy: print(f"{prog}: {busy}; waiting for it (--wait)", file=sys.stderr))
    except Busy as busy:
        busy.exit_status = EXIT_BUSY
        busy.advise("Wait for it to finish (or stop it)", "; a run directory is used by one process at a time")
        raise
    except OSError as exc:  # the directory cannot be made, or its lock file opened
        _refuse_odd_lock_file(out, lock.path)
        reason = exc.strerror or str(exc)
        if not out.is_dir():
            lineage = [out, *out.parents]
            found = next((path for path in lineage if os.path.lexists(path)), None)
            if found is not None and not found.is_dir():
                reason = f"{found} is a file, not a directory"
            raise RunError(f"cannot create the run directory {out}: {reason}; give --out a directory you can write "
                           "in") from None
        import errno

        full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # (it records which process holds it)
        fix = ("free space on its disk (or lift the quota or file size limit in the way)" if full else
               f"clear its immutable flag (chattr -i {lock.path})" if exc.errno == errno.EPERM else
               f"make it readable and writable for you (chmod u+rw {lock.path})")
        raise RunError(f"cannot open {lock.path}, the lock file that keeps a second process out of the run directory "
                       f"{out}: {reason}; {fix}, or choose another --out") from None


def refuse_moved(lock: RunDirectoryLock) -> None:
    """`RunError` when the run directory is no longer where the run took it (moved or removed while it ran), before
    anything is written at a path that now names another directory, or none."""
    where = lock.moved_to()
    if where is None:
        return
    if where:
        raise RunError(f"the run directory {lock.directory} was moved to {where} while the run was using it, so "
                       f"nothing more is written at {lock.directory}: everything it finished is saved in {where}; "
                       f"finish it there with the same command and --resume --out {where}")
    raise RunError(f"the run directory {lock.directory} was removed while the run was using it, with what it had "
                   "finished: start the run again (a run directory is used by one process at a time, and is not "
                   "to be moved or removed while a run uses it)")


def _refuse_odd_lock_file(out: Path, path: Path) -> None:
    """`RunError` when the run directory's lock file is something mt-eval never makes there (a directory, a
    symbolic link, a pipe): the directory is not one of its runs."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # none yet (made by the lock), or it cannot be looked at (said when it is opened)
    if stat.S_ISREG(mode):
        return
    kinds = {stat.S_IFDIR: "a directory", stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a named pipe",
             stat.S_IFSOCK: "a socket"}
    kind = kinds.get(stat.S_IFMT(mode), "a device file")
    raise RunError(f"{path} is {kind}, where a run keeps its lock file, so {out} is not a run directory mt-eval wrote: "
                   "choose another --out, or move it away")
