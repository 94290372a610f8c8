"""A child process in its own process group: its stderr tail, and a shutdown that leaves nothing behind.

Shared by the bridge host (`mt_eval.bridge.connection`) and the translator-program adapters
(`mt_eval.adapters`). Children are started with ``start_new_session=True``, so the child's pid is also
its process group id and one signal reaches every program it started (a shell pipeline, say).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from typing import Protocol


class PipeOwner(Protocol):
    """What `ChildPipes` reports to: the object that manages one child process."""

    def on_started(self, transport: asyncio.SubprocessTransport) -> None: ...
    def on_stdout(self, data: bytes) -> None: ...
    def on_stderr(self, data: bytes) -> None: ...
    def on_stdout_closed(self) -> None: ...
    def on_exit(self) -> None: ...


class ChildPipes(asyncio.SubprocessProtocol):
    """Routes a child's pipes, from the event loop's I/O callbacks, to its owner."""

    def __init__(self, owner: PipeOwner) -> None:
        self.owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.owner.on_started(transport)  # type: ignore[arg-type]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.owner.on_stdout(data)
        else:
            self.owner.on_stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.owner.on_stdout_closed()

    def process_exited(self) -> None:
        self.owner.on_exit()


class StderrTail:
    """Keeps the last bytes a child wrote to stderr and forwards complete lines to a logger at INFO."""

    def __init__(self, logger: logging.Logger, label: str, *, max_bytes: int = 64 * 1024, max_lines: int = 40
                 ) -> None:
        self.logger = logger
        self.label = label
        self.max_bytes = max_bytes
        self.max_lines = max_lines
        self.total = 0  # bytes received so far: a mark for `since`
        self._data = bytearray()
        self._partial = b""

    def feed(self, data: bytes) -> None:
        self._data += data
        self.total += len(data)
        if len(self._data) > 2 * self.max_bytes:
            del self._data[:-self.max_bytes]
        if self.logger.isEnabledFor(logging.INFO):
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()[-4096:]
            for line in lines:
                self.logger.info("%s: %s", self.label, line.decode("utf-8", "replace"))

    def tail(self) -> str:
        """The last lines (bounded in bytes and in lines)."""
        text = bytes(self._data[-self.max_bytes:]).decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-self.max_lines:])

    def since(self, mark: int) -> str:
        """What arrived after ``mark`` (an earlier value of `total`), as far as the kept bytes reach back."""
        kept = min(self.total - mark, len(self._data))
        return bytes(self._data[len(self._data) - kept:]).decode("utf-8", "replace") if kept > 0 else ""


def last_lines(text: str, count: int = 5) -> str:
    """The last ``count`` non-blank lines of ``text`` joined with " / " (for one-line error messages)."""
    return " / ".join([line for line in text.splitlines() if line.strip()][-count:])


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
    try:
        await asyncio.wait_for(event.wait(), seconds)
    except TimeoutError:
        return False
    return True


async def reap_group(pid: int | None, grace: float) -> None:
    """Processes the child started may outlive it in its group: SIGTERM them, SIGKILL after ``grace``."""
    if not signal_group(pid, signal.SIGTERM):
        return
    loop = asyncio.get_running_loop()
    until = loop.time() + grace
    while loop.time() < until:
        await asyncio.sleep(0.02)
        if not signal_group(pid, 0):  # signal 0 only asks whether the group still exists
            return
    signal_group(pid, signal.SIGKILL)


async def close_group(pid: int | None, close_stdin: Callable[[], None], exited: asyncio.Event, grace: float) -> None:
    """Close stdin, then SIGTERM and finally SIGKILL the group, ``grace`` seconds apart, until the child has
    exited; then end whatever it left behind in its group."""
    close_stdin()
    if not await wait_event(exited, grace):
        signal_group(pid, signal.SIGTERM)
        if not await wait_event(exited, grace):
            signal_group(pid, signal.SIGKILL)
            await wait_event(exited, grace)
    await reap_group(pid, grace)


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
