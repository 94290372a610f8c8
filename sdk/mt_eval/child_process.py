"""The one child-process core of the bridge host and the translator-program adapters.

`ChildProcess` is a child in its own process group, driven from the event loop's I/O callbacks (no
reader task to own, so one task may start it and another close it): it is spawned with
``start_new_session=True`` (its pid is its process group id, and one signal reaches every program it
started), stderr is drained continuously into a bounded tail, its end is detected once, and `aclose`
escalates close stdin → SIGTERM → SIGKILL to the whole group, then ends whatever it left behind.

`LazyTimer` is the single loop timer a child's deadlines share (the crash-loop budget its owner restarts it
within and how work is sent to it alone after a failure are in `mt_eval.child_policy`). A bridge guest
(`mt_eval.bridge.connection.GuestConnection`), a persistent translator program
(`mt_eval.adapters.record_process.RecordProcess`) and a program run once per batch
(`mt_eval.adapters.batch_process`) are the kinds of child.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence

import anyio

from mt_eval import child_spawn
from mt_eval.child_detached import DetachedWatch, end_strays
from mt_eval.child_stderr import StderrTail
from mt_eval.process_exit import adopt_orphans
from mt_eval.process_state import group_members, runs

# Writes held back in one turn of the loop that go out together (`ChildProcess.write`): with 64 one-entry requests
# in flight, groups of 8 let the child answer the first while the host sends the rest (1.5x the requests per
# second of one write per turn; benchmarks/bridge.py), and cost it one wake-up per group rather than per request.
WRITE_GROUP = 8

def signal_group(pid: int | None, sig: int) -> bool:
    """Signal the process group ``pid`` leads; False when nothing is left in it (or it is not ours)."""
    if pid is None:
        return False
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def wait_event(event: asyncio.Event, seconds: float) -> bool:
    """Wait for ``event`` at most ``seconds``; True when it was set."""
    with anyio.move_on_after(seconds):
        await event.wait()
    return event.is_set()


async def reap_group(pid: int | None, grace: float) -> None:
    """Processes the child started may outlive it in its group: SIGTERM them, SIGKILL after ``grace``."""
    if not signal_group(pid, signal.SIGTERM):
        return
    loop = asyncio.get_running_loop()
    until = loop.time() + grace
    while loop.time() < until:
        await anyio.sleep(0.02)
        if not group_runs(pid):
            return
    signal_group(pid, signal.SIGKILL)


def group_runs(pid: int | None) -> bool:
    """Whether a process of the group ``pid`` leads still runs. A zombie has ended, though signal 0 still finds its
    group: one this process adopted (`mt_eval.process_exit.adopt_orphans`) stays a zombie until the program ends,
    and waiting for it kept every close waiting out its whole grace. Where /proc cannot be read, whether the group
    can still be signalled."""
    if not signal_group(pid, 0):
        return False
    members = group_members(pid) if pid is not None else []
    return not members or any(runs(member) for member in members)


def exit_status(code: int | None) -> str:
    """How a child ended, in words: "exited with code 2", "was killed by SIGKILL", "closed its stdout"."""
    if code is None:
        return "closed its stdout"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class LazyTimer:
    """One loop timer serving any number of deadlines: `ensure` arms it for the earliest; the callback
    decides what is due and calls `ensure` again for the next, so moving a deadline later costs nothing."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback = callback
        self._handle: asyncio.Handle | None = None
        self._when = 0.0  # when it is armed for: kept here, as uvloop arms a time under 0.5 ms away with a plain
        # Handle (call_soon's), which has no when()

    def ensure(self, when: float) -> None:
        """Fire no later than ``when`` (loop time)."""
        if self._handle is not None:
            if self._when <= when:
                return
            self._handle.cancel()
        self._when = when
        self._handle = asyncio.get_running_loop().call_at(when, self._fire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        self._callback()


class _DirectReader(asyncio.Protocol):
    """The child's stdout (or stderr), handed over in the I/O callback that read it: the subprocess transport
    would hand it over one turn of the loop later, which is one more turn per round trip. Both streams are read
    this way, so what a child wrote to stderr before an answer is known when the answer is. The end of a stream
    still goes through the transport's own protocol, so it knows the pipe closed."""

    def __init__(self, child: ChildProcess, fd: int, original: asyncio.BaseProtocol) -> None:
        self.child = child
        self.fd = fd
        self.original = original

    def data_received(self, data: bytes) -> None:
        self.child.pipe_data_received(self.fd, data)

    def eof_received(self) -> bool | None:
        return self.original.eof_received() if isinstance(self.original, asyncio.Protocol) else None

    def connection_lost(self, exc: Exception | None) -> None:
        self.original.connection_lost(exc)


class ChildProcess(asyncio.SubprocessProtocol):
    """A child in its own process group (see the module docstring). `spawn`, `write`, then `aclose`.

    Subclasses implement `on_output` (stdout bytes, in the I/O callback), `on_gone` (the child ended by
    itself: it exited and its stdout is drained, or half a second after either — a grandchild may hold
    stdout open) and `on_closed` (after `aclose` or `kill`: fail whatever is still waiting).
    """

    GONE_GRACE_S = 0.5

    def __init__(self, command: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None, label: str | None = None,
                 logger: logging.Logger | None = None, tail_bytes: int = 64 * 1024, tail_lines: int = 40,
                 grace_s: float = 2.0, stderr_encoding: str = "utf-8") -> None:
        if not command:
            raise ValueError("a child process needs at least the program to run")
        self.command = list(command)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.label = label or os.path.basename(self.command[0])
        self.grace_s = grace_s
        self.exit_code: int | None = None
        self._stderr = StderrTail(logger or logging.getLogger("mt_eval.child"), self.label, max_bytes=tail_bytes,
                                  max_lines=tail_lines, encoding=stderr_encoding)
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._outgoing: list[bytes] | None = None  # held back in this turn of the loop (`write`); None: none written
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exited = asyncio.Event()
        self._stdout_closed = False
        self._gone_timer: asyncio.TimerHandle | None = None
        self._gone = False
        self._closing = False
        self._detached = DetachedWatch()  # what it starts outside its group, ended when it is closed

    # ---- life cycle ------------------------------------------------------------------------------

    async def spawn(self) -> None:
        """Start the child; raises `OSError` when the program cannot be run."""
        loop = self._loop = asyncio.get_running_loop()  # (output may arrive before the spawn returns: a banner)
        adopt_orphans()  # what it detaches and leaves when it exits on its own is ended at the program's end
        transport: asyncio.SubprocessTransport
        if child_spawn.usable():  # Popen and a pidfd, on any loop (uvloop's own spawning forks this interpreter)
            transport = await child_spawn.spawn(loop, self, self.command, cwd=self.cwd, env=self.env)
        else:
            transport, _ = await loop.subprocess_exec(
                lambda: self, *self.command, cwd=self.cwd, env=self.env, start_new_session=True,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        self._transport = transport
        self._stdin = transport.get_pipe_transport(0)  # type: ignore[assignment]
        for fd in (1, 2):
            pipe = transport.get_pipe_transport(fd)
            if pipe is not None:
                pipe.set_protocol(_DirectReader(self, fd, pipe.get_protocol()))

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def running(self) -> bool:
        """Started, not gone and not being closed."""
        return self._transport is not None and not self._gone and not self._closing

    @property
    def exited(self) -> bool:
        return self._exited.is_set()

    def stderr_tail(self) -> str:
        """The last lines the child wrote to stderr (bounded in bytes and lines)."""
        return self._stderr.tail()

    def write(self, data: bytes) -> bool:
        """Write to the child's stdin; False when it can no longer be written.

        The first write in a turn of the event loop goes out at once; the others made in the same turn go out
        together when it ends, in one system call: many callers each sending a small request cost the child
        one wake-up, not one each, and a lone request waits for nothing. In the turn after the child's output
        was read — when the callers it answered send their next requests — every write is held back until the
        turn ends, so a caller sending one request after another costs the loop no extra turn. Held writes go out
        as soon as `WRITE_GROUP` of them are waiting: the child starts on those while the callers are still
        writing the others, so the two processes work at once instead of taking turns."""
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            return False
        if self._outgoing is None:
            stdin.write(data)
            self._outgoing = []
            self._loop.call_soon(self._flush)  # type: ignore[union-attr]
        else:
            held = self._outgoing
            held.append(data)
            if len(held) >= WRITE_GROUP:
                self._outgoing = []
                stdin.write(b"".join(held))
        return True

    def _flush(self) -> None:
        """The end of a turn in which something was written: send what was held back."""
        chunks, self._outgoing = self._outgoing, None
        if chunks and self._stdin is not None and not self._stdin.is_closing():
            self._stdin.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def close_stdin(self) -> None:
        if self._stdin is not None:
            self._flush()
            self._stdin.close()

    def kill(self) -> None:
        """End the child now: SIGKILL to its group. It is gone at once; `on_gone` is not called."""
        self._gone = True
        if self._gone_timer is not None:
            self._gone_timer.cancel()
        signal_group(self.pid, signal.SIGKILL)

    def end_from_outside(self) -> None:
        """End the child and its group at once, from outside the event loop it was started on, which has ended."""
        signal_group(self.pid, signal.SIGKILL)
        end = getattr(self._transport, "end_from_outside", None)  # (a child_spawn one: its pipes, pidfd, reaping)
        if end is not None:
            end()
        self._transport = None

    async def aclose(self) -> None:
        """Close stdin, then SIGTERM and SIGKILL the group, ``grace_s`` apart, until the child has exited;
        then end whatever it left behind in its group, and call `on_closed`."""
        if self._transport is None or self._closing:
            return
        self._closing = True
        strays = self._detached.all(self.pid)  # (read now: once the child ends, they are no longer known as its own)
        try:
            self.close_stdin()
            if not await wait_event(self._exited, self.grace_s):
                signal_group(self.pid, signal.SIGTERM)
                if not await wait_event(self._exited, self.grace_s):
                    signal_group(self.pid, signal.SIGKILL)
                    await wait_event(self._exited, self.grace_s)
            await reap_group(self.pid, self.grace_s)
            await end_strays(strays, self.grace_s, self.label, self._stderr.logger)
        finally:
            if not self._exited.is_set():
                signal_group(self.pid, signal.SIGKILL)
            self.on_closed()
            self._transport.close()

    # ---- what subclasses implement ---------------------------------------------------------------

    def on_output(self, data: bytes) -> None:
        raise NotImplementedError

    def on_gone(self, status: str) -> None:
        """The child ended by itself; ``status`` says how ("exited with code 3")."""

    def on_closed(self) -> None:
        """`aclose` finished: fail whatever still waits for the child."""

    # ---- asyncio.SubprocessProtocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            if self._detached.due():
                self._detached.look(self.pid)
            self.on_output(data)
            if self._outgoing is None:  # what the callers woken by this output write goes out as this turn ends
                self._outgoing = []
                self._loop.call_soon(self._flush)  # type: ignore[union-attr]
        else:
            self._stderr.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._stdout_closed = True
            self._check_gone()

    def process_exited(self) -> None:
        if self._transport is not None:
            self.exit_code = self._transport.get_returncode()
        self._exited.set()
        self._check_gone()
        if self._gone:
            self._release()

    def _check_gone(self) -> None:
        if self._gone:
            return
        if self._exited.is_set() and self._stdout_closed:
            self._declare_gone()
        elif self._gone_timer is None:
            self._gone_timer = asyncio.get_running_loop().call_later(self.GONE_GRACE_S, self._declare_gone)

    def _declare_gone(self) -> None:
        if self._gone_timer is not None:
            self._gone_timer.cancel()
        if self._gone:
            return
        self._gone = True
        if not self._closing:
            self.on_gone(exit_status(self.exit_code))
        if self._exited.is_set():
            self._release()

    def _release(self) -> None:
        """The child is gone and has exited: free its pipes now, not only when (or if) its owner closes it."""
        if self._transport is not None and not self._closing:
            self._transport.close()
