"""`mt_eval.loop_watchdog.LoopWatchdog`, in a process of its own (its last resort ends the process): a block is
interrupted, so is each one that follows before the loop can turn, and code that swallows every interrupt still
ends with the watchdog's message and status, not a hang."""

from __future__ import annotations

import subprocess
import sys
import time

SCRIPT = """
import asyncio, sys, time
from mt_eval.loop_watchdog import LoopBlocked, LoopWatchdog

async def main():
    with LoopWatchdog(0.1, hard_limit_s=0.3, hard_message="gave up", hard_exit_code=7):
        caught = 0
        while sys.argv[1] == "swallow" or caught < 3:  # blocks one after another, the loop never turning between
            try:
                time.sleep(10)
            except LoopBlocked:
                caught += 1
        print("caught", caught)

asyncio.run(main())
"""


def watched(mode: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=60)
    return done, time.monotonic() - started


def test_each_block_before_the_loop_turns_again_is_interrupted():
    done, _ = watched("three")
    assert (done.returncode, done.stdout) == (0, "caught 3\n"), done.stderr


def test_code_that_swallows_every_interrupt_ends_the_process_with_the_message():
    done, took = watched("swallow")
    assert (done.returncode, done.stderr) == (7, "gave up\n")
    assert took < 30  # (16 interrupts 0.1 s apart, then the end: not the 10 s of each sleep, nor for ever)


def test_code_that_swallows_every_interrupt_ends_the_process_when_stderr_is_gone_too():
    """A closed stderr (its reader gone: `mt-eval run … 2>&1 | head`) made writing the message raise
    BrokenPipeError in the watchdog's thread, which then never ended the process."""
    import os

    read, write = os.pipe()
    os.close(read)  # (nobody will read what the process writes to stderr)
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, "swallow"], stdout=subprocess.PIPE, stderr=write,
                              text=True, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 7
