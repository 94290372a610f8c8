"""Where a Python guest (`mt_eval.bridge.guest`) reads its requests and writes its answers: pipes, a socket or a
terminal through the event loop, as a host gives them; regular files directly (``mt-eval serve DIR <
requests.jsonl > answers.jsonl``), a chunk a turn of the loop, so that requests start as they would from a host.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import select
import stat
import sys
from collections.abc import Callable
from typing import Protocol


class Server(Protocol):
    """What the input hands what it reads to (`mt_eval.bridge.guest.GuestServer`)."""

    closed: asyncio.Event

    def on_data(self, data: bytes) -> None: ...
    def end_of_file(self) -> None: ...


def streams(fd: int) -> bool:
    """Whether ``fd`` is a stream the event loop can wait on — a pipe, a socket or a terminal — rather than a
    file (or a device such as /dev/null), which is read or written directly."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class Output(Protocol):
    def write(self, data: bytes) -> None: ...
    def is_closing(self) -> bool: ...
    def close(self) -> None: ...


class FileOutput:
    """The protocol's output when it is a regular file (``> answers.jsonl``) or a terminal: each line written at once
    (a terminal's output is not watched by the event loop, which would read, and drop, what is typed into it). A
    write that fails (a full disk) closes it and is handed to ``on_error``: nothing more can be answered."""

    def __init__(self, fd: int, on_error: Callable[[OSError], None]) -> None:
        self.fd = fd
        self.on_error = on_error
        self.closed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                try:
                    view = view[os.write(self.fd, view):]
                except BlockingIOError:  # (a terminal, non-blocking as its input is: until it takes more)
                    select.select([], [self.fd], [])
        except OSError as exc:
            self.close()
            self.on_error(exc)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError):
                os.close(self.fd)


class PipeOutput(asyncio.Protocol):
    """The protocol's output when it is a pipe (a host's, or ``| jq``): its reader gone (``| head``) is handed to
    ``on_error`` as a `BrokenPipeError`, unless the guest closed it itself (``done``)."""

    def __init__(self, on_error: Callable[[OSError], None]) -> None:
        self.on_error = on_error
        self.done = False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done:
            self.on_error(exc if isinstance(exc, OSError) else BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE)))


class FileInput:
    """Requests from a regular file (``< requests.jsonl``), a chunk a turn of the loop, read in a callback as a
    pipe's data is: each request then starts as it would from a host (in the turn that read it, in its own task),
    so a ``cancel`` that follows it finds it. At the end of the file the input is closed."""

    def __init__(self, server: Server, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self.server, self.fd, self.loop = server, fd, loop
        self.handle = loop.call_soon(self._read)

    def _read(self) -> None:
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError as exc:
            print(f"mt-eval serve: cannot read the requests: {exc.strerror or exc}", file=sys.stderr)
            chunk = b""
        if not chunk:
            self.server.end_of_file()
            return
        self.server.on_data(chunk)
        self.handle = self.loop.call_soon(self._read)

    def close(self) -> None:
        self.handle.cancel()


class StdinProtocol(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server

    def data_received(self, data: bytes) -> None:
        self.server.on_data(data)

    def eof_received(self) -> None:  # (None: the transport closes itself)
        self.server.end_of_file()  # (a last request without its newline is answered, as from a file)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.closed.set()
