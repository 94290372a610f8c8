"""`SignalArrivals`: a thread hears of each signal, and the wakeup fd it replaced (uvloop's) hears of it too."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Iterator

import pytest

from mt_eval.signal_arrivals import SignalArrivals

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX signals")


@contextlib.contextmanager
def previous_wakeup_fd() -> Iterator[tuple[socket.socket, int]]:
    """A wakeup fd set before (as uvloop sets one), and the socket it is read from; SIGUSR2 given a handler."""
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    handler = signal.signal(signal.SIGUSR2, lambda number, frame: None)
    before = signal.set_wakeup_fd(writer.fileno())
    try:
        yield reader, writer.fileno()
    finally:
        signal.set_wakeup_fd(before)
        signal.signal(signal.SIGUSR2, handler)
        reader.close()
        writer.close()


def test_a_signal_is_heard_in_another_thread_and_passed_on():
    with previous_wakeup_fd() as (loop_side, loop_fd):
        arrivals = SignalArrivals()
        assert arrivals.open()
        heard: list[set[int]] = []
        waiting = threading.Thread(target=lambda: heard.append(arrivals.wait(5)))
        waiting.start()
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR2)
        waiting.join(5)
        assert heard == [{signal.SIGUSR2}]
        assert loop_side.recv(16) == bytes([signal.SIGUSR2])  # (uvloop would have been woken by it as before)
        arrivals.close()
        current = signal.set_wakeup_fd(loop_fd)
        assert current == loop_fd  # the previous one is back in place


def test_wake_ends_a_wait_with_no_signal_and_close_keeps_a_fd_set_since():
    with previous_wakeup_fd():
        arrivals = SignalArrivals()
        assert arrivals.open()
        heard: list[set[int]] = []
        waiting = threading.Thread(target=lambda: heard.append(arrivals.wait(30)))
        waiting.start()
        arrivals.wake()
        waiting.join(5)
        assert heard == [set()]
        other, peer = socket.socketpair()
        other.setblocking(False)
        signal.set_wakeup_fd(other.fileno())  # (someone else took it meanwhile)
        arrivals.close()
        assert signal.set_wakeup_fd(-1) == other.fileno()
        other.close()
        peer.close()


def test_it_cannot_be_opened_outside_the_main_thread():
    opened: list[bool] = []
    thread = threading.Thread(target=lambda: opened.append(SignalArrivals().open()))
    thread.start()
    thread.join()
    assert opened == [False]
