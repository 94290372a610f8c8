"""Locks that keep two processes out of one run directory or one champollion project.

Both are held by the operating system on behalf of a process, so they vanish the moment it ends, however
it ends (SIGKILL and power loss included): there is no marker file to go stale and nothing to clean up.
A process that finds one held learns who holds it — pid, start time, command — to tell its user.

- `RunDirectoryLock` (``mt-eval run``): ``flock(2)`` on ``DIR/.lock``, whose content names the holder.
  A run directory is only ever used by the Python harness, and ``flock`` works across containers that
  share a volume and over NFS.
- `ProjectLock` (``mt-eval locales`` and the Node ``mt-eval-locales``): Node has no ``flock``, so both
  sides use the one primitive they share: a listening Unix socket bound to a name derived from the
  locales directory's device and inode. Binding is atomic (one process gets the name, every other gets
  ``EADDRINUSE``), the kernel frees the name when the socket's last descriptor closes (at exit or
  SIGKILL), and the holder answers a connection with who it is. On Linux the name is in the abstract
  namespace, which has no file at all; it is shared by the processes of one network namespace (two
  containers with their own networks do not see each other's). Elsewhere the socket is a file in the
  temporary directory; one that nobody answers is left by a dead holder and is replaced.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from mt_eval.background_threads import BackgroundThread
from mt_eval.errors import ExpectedError

POLL_S = 0.1


class Busy(ExpectedError):
    """Another process holds the lock; ``holder`` is what it says about itself (may be empty)."""

    waited_s: float | None = None  # how long it waited before giving up (--wait SECONDS); None: it did not wait

    def __init__(self, what: str, holder: dict[str, Any]) -> None:
        self.what = what
        self.holder = holder
        super().__init__(f"{what} is in use by {describe_holder(holder)}")

    def advise(self, first: str, note: str = "") -> None:
        """Set the fix: ``first`` (what to do about the holder, a sentence), then --wait — or, when it already
        waited, that the holder still has it after that long and a longer --wait — then ``note``."""
        if self.waited_s is None:
            self.fix = f"{first}, or give --wait to wait{note}"
        else:
            self.fix = (f"Waited {self.waited_s:g} s and it still holds it: {first[0].lower()}{first[1:]}, or give "
                        f"a longer --wait{note}")


def describe_holder(holder: dict[str, Any]) -> str:
    """``pid 4242 (mt-eval run --resume, started 2025-01-02T10:00:00+00:00 on host)``."""
    if not holder.get("pid"):
        return "another process (it did not say which)"
    details = [str(holder[key]) for key in ("command",) if holder.get(key)]
    if holder.get("started_at"):
        details.append(f"started {holder['started_at']}")
    if holder.get("host") and holder.get("host") != socket.gethostname():
        details.append(f"on {holder['host']}")
    return f"pid {holder['pid']}" + (f" ({', '.join(details)})" if details else "")


def holder_info(command: str) -> dict[str, Any]:
    return {"pid": os.getpid(), "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "command": command, "host": socket.gethostname()}


def _waiting(acquire: Callable[[], dict[str, Any] | None], what: str, wait_s: float | None,
             on_wait: Callable[[Busy], None] | None) -> None:
    """Call ``acquire`` (None: acquired; else the holder) until it succeeds, or raise `Busy` once ``wait_s``
    (None: not at all) has passed."""
    deadline = None if wait_s is None else time.monotonic() + wait_s
    told = False
    while True:
        holder = acquire()
        if holder is None:
            return
        busy = Busy(what, holder)
        if deadline is None or time.monotonic() >= deadline:
            busy.waited_s = wait_s
            raise busy
        if not told and on_wait is not None:
            on_wait(busy)
            told = True
        time.sleep(POLL_S)


class RunDirectoryLock:
    """``with RunDirectoryLock(directory, command=...).acquire(wait_s=...):`` — flock on ``DIR/.lock``."""

    FILE = ".lock"

    def __init__(self, directory: Path, *, command: str) -> None:
        self.directory = directory
        self.path = directory / self.FILE
        self.command = command
        self._fd: int | None = None
        self.writable = True  # (False: a lock file this user may only read, locked as it is)

    def acquire(self, *, wait_s: float | None = None, on_wait: Callable[[Busy], None] | None = None,
                read_only: bool = False) -> RunDirectoryLock:
        """Take the lock; raises `Busy` (after ``wait_s`` seconds of trying, when given). ``read_only``: a lock
        file this user may only read (a read-only run directory) is locked as it is, without naming the holder."""
        import fcntl

        self.directory.mkdir(parents=True, exist_ok=True)
        # (never through a symbolic link: writing who holds it would empty the file it points to)
        flags = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | flags, 0o644)
        except OSError as exc:
            if not (read_only and exc.errno in (errno.EACCES, errno.EROFS)):
                raise
            fd = os.open(self.path, os.O_RDONLY | flags)  # (flock needs no write access)
            self.writable = False

        def attempt() -> dict[str, Any] | None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return self._holder(fd)
            return None

        try:
            _waiting(attempt, f"run directory {self.directory}", wait_s, on_wait)
            if self.writable:
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(holder_info(self.command)).encode() + b"\n", 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    @staticmethod
    def _holder(fd: int) -> dict[str, Any]:
        for _ in range(20):  # the holder writes who it is just after it took the lock
            try:
                found = json.loads(os.pread(fd, 4096, 0) or b"null")
            except ValueError:
                found = None
            if isinstance(found, dict):
                return found
            time.sleep(0.01)
        return {}

    def moved_to(self) -> str | None:
        """None while the directory held is still at its path; else where it is now, as the lock file this process
        holds open is found there ("": removed, or nowhere this system says)."""
        if self._fd is None:
            return None
        held = os.fstat(self._fd)
        with contextlib.suppress(OSError):
            there = os.stat(self.path, follow_symlinks=False)
            if (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino):
                return None
        try:
            now = os.readlink(f"/proc/self/fd/{self._fd}")
        except OSError:
            return ""
        return "" if held.st_nlink == 0 or not now.startswith("/") else str(Path(now).parent)

    def release(self) -> None:
        if self._fd is not None:
            if self.writable:
                os.ftruncate(self._fd, 0)  # no holder to name any more; the file itself stays (it is harmless)
            os.close(self._fd)  # closing releases the lock
            self._fd = None

    def __enter__(self) -> RunDirectoryLock:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()


def project_lock_addresses(directory: Path) -> list[str]:
    """The socket addresses of a champollion project's locales directory, as Python and Node derive them.

    On Linux the name is abstract, and Node (libuv) binds it padded with NULs to the full length of
    ``sun_path`` while Python binds it exactly: to the kernel those are two names, so Python holds both
    and looks for a holder at both, and the two sides see each other whichever form Node uses.
    """
    info = os.stat(directory)
    key = hashlib.sha256(f"champollion-project:{info.st_dev}:{info.st_ino}".encode()).hexdigest()[:32]
    if not sys.platform.startswith("linux"):
        return [os.path.join(tempfile.gettempdir(), f"mt-eval-{key}.sock")]
    exact = f"\0mt-eval/{key}"
    return [exact, exact.ljust(_SUN_PATH, "\0")]


_SUN_PATH = 108  # bytes in sockaddr_un.sun_path on Linux


class ProjectLock:
    """The lock of a champollion project (see the module docstring); held until `release`."""

    def __init__(self, locales_dir: Path, *, command: str) -> None:
        self.locales_dir = locales_dir
        self.command = command
        self._servers: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._info = b""

    def acquire(self, *, wait_s: float | None = None, on_wait: Callable[[Busy], None] | None = None) -> ProjectLock:
        addresses = project_lock_addresses(self.locales_dir)
        self._info = json.dumps(holder_info(self.command)).encode() + b"\n"

        def attempt() -> dict[str, Any] | None:
            for _ in range(3):
                holder = self._bind(addresses)
                if holder is None:
                    return None
                if holder:
                    return holder
            return {}

        _waiting(attempt, f"champollion project {self.locales_dir}", wait_s, on_wait)
        for server in self._servers:
            thread = BackgroundThread(target=self._answer, args=(server,), name="mt-eval project lock", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _bind(self, addresses: list[str]) -> dict[str, Any] | None:
        """Bind every address (None: the lock is ours), or what the holder of one says ({}: try again)."""
        bound: list[socket.socket] = []
        for address in addresses:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                server.bind(address)
            except OSError as exc:
                server.close()
                for other in bound:
                    other.close()
                if exc.errno != errno.EADDRINUSE:
                    raise
                holder = ask_holder(address)
                if holder is None and not address.startswith("\0"):
                    _remove_dead_socket(address)  # a socket file its dead holder left behind
                return holder if holder is not None else {}  # nobody answers: it has just gone; try again
            bound.append(server)
        for server in bound:
            server.listen(8)
        self._servers = bound
        return None

    def _answer(self, server: socket.socket) -> None:
        """Tell whoever connects who holds the lock (until the lock is released)."""
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client, contextlib.suppress(OSError):
                client.sendall(self._info)

    def release(self) -> None:
        servers, self._servers = self._servers, []
        for server in servers:
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        for thread in self._threads:
            thread.join(1.0)  # its accept() holds the socket: the name is free once it returned
        self._threads = []
        for server in servers:
            address = server.getsockname()
            server.close()
            if isinstance(address, str) and address and not address.startswith("\0"):
                _remove_dead_socket(address)

    def __enter__(self) -> ProjectLock:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()


def ask_holder(address: str, timeout_s: float = 1.0) -> dict[str, Any] | None:
    """What the holder of ``address`` says about itself; {} when it does not answer in time, None when
    nobody listens there (the holder has just gone)."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(timeout_s)
    try:
        client.connect(address)
        data = b""
        while not data.endswith(b"\n") and len(data) < 4096:
            chunk = client.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionRefusedError, FileNotFoundError):
        return None
    except OSError:
        return {}
    finally:
        client.close()
    try:
        found = json.loads(data or b"null")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _remove_dead_socket(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
