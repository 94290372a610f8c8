"""Starting a child without copying the interpreter: `subprocess.Popen`, watched through a pidfd, on any loop.

uvloop — the loop mt-eval runs methods on (`mt_eval.event_loop`) — starts children with libuv, which forks the
whole interpreter before the program replaces it: the parent copies its page tables and then takes a fault for
each page it writes while the child still shares it. Starting a program cost about 2.5 ms more CPU that way than
with the ``vfork`` that `subprocess.Popen` uses, and a bigger parent costs more. asyncio's own loop uses Popen
but watches each child from a thread of its own. So on Linux with pidfds (5.3 and later), on either loop, a
child is started with Popen and wired to the loop by hand: its pipes through ``connect_read_pipe`` and
``connect_write_pipe``, its end through a pidfd that becomes readable when it exits (no thread, no SIGCHLD
handler). `PopenTransport` is the `asyncio.SubprocessTransport` the rest of `mt_eval.child_process` sees, with
the same callbacks as the loop's own transport; elsewhere `usable` says no and the loop's own
``subprocess_exec`` starts the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


@functools.cache
def usable() -> bool:
    """Whether `spawn` starts children here (on any loop): a system where a pidfd can watch a child."""
    if sys.platform != "linux" or not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # an older kernel, or a sandbox that filters the call
        return False
    return True


def not_a_program(program: str, cwd: str | os.PathLike[str] | None) -> str | None:
    """Why ``program`` is no program to start, when it is an empty name, a directory or a file without execute
    permission (the system says only "Permission denied" for all three)."""
    path = Path(cwd or ".", program)
    if not program:
        return "the program's name is empty"
    if os.sep not in program:  # (found on PATH)
        return None
    if path.is_dir():
        return "it is a directory, not a program"
    if path.is_file() and not os.access(path, os.X_OK):
        runner = {".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node"}.get(path.suffix, "sh")
        return f"it is not executable (make it so: chmod +x {program}, or run it with its interpreter: {runner} " \
               f"{program})"
    return None


async def spawn(loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol, command: Sequence[str], *,
                cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None) -> PopenTransport:
    """Start ``command`` in its own session with its three standard streams piped to ``protocol``, as
    ``loop.subprocess_exec(..., start_new_session=True)`` does; `OSError` when it cannot be started."""
    transport = PopenTransport(loop, protocol, _popen(command, cwd, env))
    wiring = asyncio.ensure_future(transport.connect())
    try:
        await asyncio.shield(wiring)
    except BaseException:  # cancelled, or the wiring failed: the child is ended once no pipe is being wired
        transport.abandon(wiring)
        raise
    return transport


def _popen(command: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None
           ) -> subprocess.Popen[bytes]:
    """The child, started in the loop's thread as asyncio's own loop starts it: vfork returns as soon as the
    program has replaced the child, well under a millisecond."""
    return subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=cwd, env=env, start_new_session=True, bufsize=0)


class _PipeProtocol(asyncio.Protocol):
    """One of the child's pipes, reporting to the transport (data and the pipe's end, with its fd)."""

    def __init__(self, transport: PopenTransport, fd: int) -> None:
        self.transport = transport
        self.fd = fd

    def data_received(self, data: bytes) -> None:
        self.transport.protocol.pipe_data_received(self.fd, data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport.pipe_lost(self.fd, exc)


class PopenTransport(asyncio.SubprocessTransport):
    """A child started by `subprocess.Popen`, driven from ``loop`` (see the module docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, protocol: asyncio.SubprocessProtocol,
                 popen: subprocess.Popen[bytes]) -> None:
        super().__init__()
        self.loop = loop
        self.protocol = protocol
        self.popen = popen
        self._pipes: dict[int, asyncio.BaseTransport] = {}
        self._open_pipes = 0
        self._pidfd: int | None = None
        self._returncode: int | None = None
        self._closed = False
        self._abandoned = False
        self._lost = False

    async def connect(self) -> None:
        """Wire the pipes and the pidfd to the loop, then tell the protocol it is connected."""
        popen, loop = self.popen, self.loop
        for fd, pipe in ((0, popen.stdin), (1, popen.stdout), (2, popen.stderr)):
            assert pipe is not None
            connect = loop.connect_write_pipe if fd == 0 else loop.connect_read_pipe
            transport, _ = await connect(functools.partial(_PipeProtocol, self, fd), pipe)
            self._pipes[fd] = transport
            self._open_pipes += 1
        if self._abandoned:  # given up meanwhile: `abandon` ends it now that no pipe is half wired
            return
        self._pidfd = os.pidfd_open(popen.pid)
        loop.add_reader(self._pidfd, self._exited)  # (readable at once if it has ended already)
        self.protocol.connection_made(self)

    def _exited(self) -> None:
        """The pidfd is readable: the child has exited. Reap it and tell the protocol."""
        if self._returncode is not None:
            return
        code = self.popen.poll()
        if code is None:  # a readable pidfd means it has exited; should it not be reapable yet, look again soon
            self._unwatch()
            self.loop.call_later(0.01, self._exited)
            return
        self._returncode = code
        self._unwatch()
        self.protocol.process_exited()
        self._check_finished()

    def _unwatch(self) -> None:
        if self._pidfd is not None:
            self.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def pipe_lost(self, fd: int, exc: Exception | None) -> None:
        self._open_pipes -= 1
        self.protocol.pipe_connection_lost(fd, exc)
        self._check_finished()

    def _check_finished(self) -> None:
        """Exited and every pipe closed: the protocol's ``connection_lost``, once (as the loop's transport)."""
        if not self._lost and self._returncode is not None and self._open_pipes <= 0:
            self._lost = True
            self.protocol.connection_lost(None)

    # ---- asyncio.SubprocessTransport -------------------------------------------------------------

    def get_pid(self) -> int:
        return self.popen.pid

    def get_returncode(self) -> int | None:
        return self._returncode

    def get_pipe_transport(self, fd: int) -> Any:
        return self._pipes.get(fd)

    def send_signal(self, signal: int) -> None:
        self.popen.send_signal(signal)

    def terminate(self) -> None:
        self.popen.terminate()

    def kill(self) -> None:
        self.popen.kill()

    def is_closing(self) -> bool:
        return self._closed

    def abandon(self, wiring: asyncio.Future[None]) -> None:
        """End a child whose start was given up (cancelled, or its wiring failed): closed at once when its pipes
        are no longer being wired, else as soon as they are. A pipe the loop is taking over must not be closed
        meanwhile: the loop may already own (and close) its descriptor."""
        self._abandoned = True  # `connect` does not tell the protocol
        self.protocol = asyncio.SubprocessProtocol()  # nor does anything else: its caller has gone
        if wiring.done():
            self._end(wiring)
        else:
            wiring.add_done_callback(self._end)

    def _end(self, wiring: asyncio.Future[None]) -> None:
        if not wiring.cancelled():
            wiring.exception()  # (retrieved: the caller was told already)
        self.close()

    def close(self) -> None:
        """Close the pipes; a child still running is killed (as the loop's own transport does) and reaped when
        it has ended."""
        if self._closed:
            return
        self._closed = True
        for transport in self._pipes.values():
            transport.close()
        wired = [transport.get_extra_info("pipe") for transport in self._pipes.values()]
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):  # those never wired (a failed start)
            if pipe is not None and not any(pipe is other for other in wired):
                with contextlib.suppress(OSError):  # (one a failed wiring left closed already)
                    pipe.close()
        if self._returncode is None and self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
        elif self._returncode is None:  # it ended and poll just reaped it
            self._exited()
        if self._pidfd is None and self._returncode is None:  # never watched (a failed start): reap it now
            self.popen.wait()

    def end_from_outside(self) -> None:
        """Kill the child, close its pipes and its pidfd and reap it, without the loop it was wired to: that loop
        has ended (a caller's first ``asyncio.run``), and nothing else would end or reap it."""
        self._closed = True
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()
        for transport in self._pipes.values():
            _close_unlooped(transport)
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=1.0)


def _close_unlooped(transport: asyncio.BaseTransport) -> None:
    """Close a pipe's transport whose loop has ended. Its ``close`` would leave the rest to that loop, which can no
    longer run it, and the transport would say "unclosed transport" when collected: asyncio's is finished as that
    loop would have finished it, with no one told (uvloop's said so as its loop closed, and has no such step)."""
    finish = getattr(transport, "_call_connection_lost", None)  # (what asyncio's close has its loop call)
    if finish is not None and getattr(transport, "_pipe", None) is not None:  # (None: its loop finished it: aclose)
        transport.set_protocol(asyncio.Protocol())  # (its child's protocol belongs to the loop that ended)
        finish(None)
