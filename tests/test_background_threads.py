"""The threads mt-eval starts leave Ctrl-C and the other process-wide signals to the main thread.

Before: the kernel could hand Ctrl-C to the loop watchdog's thread (or another one), which only marked the handler as
due, while the main thread slept on in a method's ``time.sleep``: `mt-eval decide` and `run` went on for the whole
blocked call (`test_ctrl_c_while_blocked`, now and then). Each thread's blocked signals are read from /proc."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from mt_eval import event_loop
from mt_eval.background_threads import PROCESS_SIGNALS, BackgroundThread, signals_held
from mt_eval.loop_watchdog import LoopWatchdog
from mt_eval.progress import RunProgress, still_working

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")


def blocked_signals(thread: threading.Thread) -> set[int]:
    """The signals ``thread`` blocks, from its /proc status."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    mask = int(next(line for line in status.splitlines() if line.startswith("SigBlk:")).split()[1], 16)
    return {number for number in range(1, 65) if mask & (1 << (number - 1))}


def started_thread(named: str) -> threading.Thread:
    """The live thread whose name starts with ``named``."""
    found = [t for t in threading.enumerate() if t.name.startswith(named) and t.is_alive()]
    assert found, f"no thread named {named}… among {[t.name for t in threading.enumerate()]}"
    return found[0]


def assert_leaves_signals_to_the_main_thread(thread: threading.Thread) -> None:
    blocked = blocked_signals(thread)
    assert {signal.SIGINT, signal.SIGTERM, signal.SIGHUP} <= blocked, (thread.name, sorted(blocked))
    assert blocked >= PROCESS_SIGNALS


def test_the_loop_watchdogs_thread():
    async def main() -> None:
        with LoopWatchdog(60):
            await asyncio.sleep(0.05)
            assert_leaves_signals_to_the_main_thread(started_thread("mt-eval loop watchdog"))

    event_loop.run(main)
    assert signal.SIGINT not in blocked_signals(threading.main_thread())  # (the main thread's own are untouched)


def test_a_methods_to_thread_runs_in_a_thread_that_leaves_them():
    async def main() -> set[int]:
        return await asyncio.to_thread(lambda: blocked_signals(threading.current_thread()))

    assert event_loop.run(main) >= PROCESS_SIGNALS


def test_the_still_working_reminder():
    with still_working("still importing ({seconds} s)", every_s=60, stream=io.StringIO()):
        assert_leaves_signals_to_the_main_thread(started_thread("mt-eval-still-working"))


def test_the_progress_bars_refresh_thread_on_a_terminal():
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        before = set(threading.enumerate())
        progress = RunProgress(10, label="run", stream=terminal)
        try:
            refresh = [t for t in threading.enumerate() if t not in before]
            assert refresh, "rich started no refresh thread"
            assert_leaves_signals_to_the_main_thread(refresh[0])
        finally:
            progress.close()
    os.close(leader)
    assert signal.SIGINT not in blocked_signals(threading.main_thread())


def test_signals_held_gives_back_the_mask_and_delivers_what_came_meanwhile():
    seen: list[int] = []
    previous = signal.signal(signal.SIGUSR2, lambda number, frame: seen.append(number))
    try:
        with signals_held():
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR2)
            time.sleep(0.05)
            assert seen == []
        time.sleep(0.05)
        assert seen == [signal.SIGUSR2]
        assert signal.SIGUSR2 not in blocked_signals(threading.main_thread())
    finally:
        signal.signal(signal.SIGUSR2, previous)


def test_a_background_thread_runs_its_target_with_them_blocked():
    found: list[set[int]] = []
    thread = BackgroundThread(target=lambda: found.append(blocked_signals(threading.current_thread())))
    thread.start()
    thread.join()
    assert found[0] >= PROCESS_SIGNALS
