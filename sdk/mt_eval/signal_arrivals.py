"""Hearing, from another thread, that a signal came: Python's wakeup fd, read by a thread of ours.

A signal's Python handler runs in the main thread, at its next bytecode. One that comes just before the main thread
enters a blocking system call (a method's ``time.sleep``, a moment after it printed) only marks the handler as due,
and the call is not interrupted: the handler waits until the call returns. `mt_eval.loop_watchdog` uses
`SignalArrivals` to hear of such a signal and wake the main thread, so that its handler (Ctrl-C's) runs at once.

Python's C handler writes each signal's number to the wakeup fd (`signal.set_wakeup_fd`), whatever the thread. The
event loop may have one already (uvloop's, which wakes the loop to run handlers while it waits): what is read is
passed on to it, so it hears of every signal as before.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket


class SignalArrivals:
    """Open it in the main thread (`open`), `wait` in another, `close` in the main thread again."""

    def __init__(self) -> None:
        self._reader: socket.socket | None = None
        self._writer: socket.socket | None = None
        self._passed_on = -1  # the wakeup fd this one replaced, which gets every number read (-1: none)

    def open(self) -> bool:
        """Become Python's wakeup fd; False when that cannot be done (not the main thread, no sockets)."""
        try:
            reader, writer = socket.socketpair()
        except OSError:
            return False
        reader.setblocking(False)
        writer.setblocking(False)
        try:
            self._passed_on = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):  # (not in the main thread)
            reader.close()
            writer.close()
            return False
        self._reader, self._writer = reader, writer
        return True

    def wait(self, timeout_s: float) -> set[int]:
        """The signals that came within ``timeout_s`` (at once when one came, or `wake` was called), passed on."""
        if self._reader is None:
            return set()
        with contextlib.suppress(OSError, ValueError):
            select.select([self._reader], [], [], timeout_s)
        return self._drain()

    def wake(self) -> None:
        """End a `wait` now (it returns no signal)."""
        if self._writer is not None:
            with contextlib.suppress(OSError):
                self._writer.send(b"\0")  # (no signal has the number 0)

    def close(self) -> None:
        """Give the wakeup fd back (unless another took it meanwhile), with what was not read yet."""
        if self._reader is None or self._writer is None:
            return
        with contextlib.suppress(ValueError, OSError):
            current = signal.set_wakeup_fd(self._passed_on)
            if current != self._writer.fileno():  # (replaced since: that one stays)
                signal.set_wakeup_fd(current)
        self._drain()
        self._reader.close()
        self._writer.close()
        self._reader = self._writer = None

    def _drain(self) -> set[int]:
        came = bytearray()
        while self._reader is not None:
            try:
                read = self._reader.recv(512)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            if not read:
                break
            came += read
        numbers = bytes(came).replace(b"\0", b"")
        if numbers and self._passed_on >= 0:
            with contextlib.suppress(OSError):
                os.write(self._passed_on, numbers)
        return set(numbers)
