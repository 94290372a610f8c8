"""What a child's processes are doing, read from /proc: `group_busy` says a program is working only when none
of its threads may be waiting for input, so that a silent program is not told to take a longer timeout when it
buffers its output (`mt_eval.adapters.record_process`)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from mt_eval.process_state import WAIT_SYSCALLS, group_busy

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not WAIT_SYSCALLS.get(__import__("platform")
                                                                                              .machine()),
                                reason="a process's system calls are read from Linux's /proc")

PROGRAMS = {
    "sleeps (loading a model)": ("import time\ntime.sleep(30)\n", True),
    "computes": ("while True:\n    pass\n", True),
    "reads its input": ("import sys\nsys.stdin.readline()\n", False),
    "waits for its input in select": ("import select, sys\nselect.select([sys.stdin], [], [])\n", False),
    "reads its input in a thread while the main one waits for it":
        ("import sys, threading\nt = threading.Thread(target=sys.stdin.readline)\nt.start()\nt.join()\n", False),
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_group_is_busy_only_when_no_thread_of_it_may_be_waiting_for_input(program):
    code, busy = PROGRAMS[program]
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # (until it has started and reached the call it stays in)
            time.sleep(0.2)
            if group_busy(child.pid) == busy:
                time.sleep(0.2)
                break
        assert group_busy(child.pid) == busy
    finally:
        child.kill()
        child.wait()
        child.stdin.close()  # type: ignore[union-attr]


def test_nothing_is_known_of_a_group_that_is_gone():
    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    child.wait()
    assert group_busy(child.pid) is False
    assert group_busy(None) is False
