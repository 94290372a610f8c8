"""A bridge method (a Node or command plugin, or one loaded with isolate=True) called from plain synchronous code,
one ``asyncio.run`` after another: the guest the first one started, on a loop that has ended, is ended and a new
one started on the caller's loop (before: "Event loop is closed", and aclose() failed on "a different loop")."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod
from test_bridge_answers import ANSWERS_BADLY

CONFIG = {"source_lang": "eng", "target_lang": "spa"}


def method() -> BridgeMethod:
    return BridgeMethod([sys.executable, "-c", ANSWERS_BADLY, "{}"], label="upper",  # (it upper-cases every source)
                        options=HostOptions(start_timeout_s=15, request_timeout_s=10, shutdown_grace_s=1))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # (a zombie is dead, but not reaped)
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_one_asyncio_run_after_another_each_translates_and_the_first_guest_is_ended():
    upper = method()
    assert asyncio.run(upper.translate([{"id": "1", "source": "a"}], CONFIG))[0]["predicted"] == "A"
    first = upper._connection.pid  # type: ignore[union-attr]
    assert asyncio.run(upper.translate([{"id": "1", "source": "b"}], CONFIG))[0]["predicted"] == "B"
    assert first is not None and not alive(first)
    asyncio.run(upper.aclose())
    gc.collect()


def test_aclose_on_a_new_loop_ends_the_guest_a_finished_loop_started():
    upper = method()
    asyncio.run(upper.translate([{"id": "1", "source": "a"}], CONFIG))
    pid = upper._connection.pid  # type: ignore[union-attr]
    asyncio.run(upper.aclose())
    assert pid is not None and not alive(pid)
    gc.collect()


def test_a_guest_on_another_threads_running_loop_is_not_taken_from_it():
    upper = method()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        done = asyncio.run_coroutine_threadsafe(upper.translate([{"id": "1", "source": "a"}], CONFIG), loop)
        assert done.result(30)[0]["predicted"] == "A"
        with pytest.raises(RuntimeError, match="runs on another event loop, which still runs"):
            asyncio.run(upper.translate([{"id": "1", "source": "b"}], CONFIG))
        asyncio.run_coroutine_threadsafe(upper.aclose(), loop).result(30)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_the_pipes_of_a_guest_ended_after_its_loop_are_closed_and_nothing_is_said_unclosed():
    """Under ``python -X dev``, the pipe transports of a loop that ended with its guest running are closed as the
    guest is ended (before: three "unclosed transport" ResourceWarnings for each such loop, once collected)."""
    script = """if True:
        import asyncio, gc, sys
        sys.path.insert(0, sys.argv[1])
        from test_bridge_method_loops import CONFIG, method
        upper = method()
        for source in "ab":  # (the second call ends the first loop's guest; aclose, on a third, the second's)
            print(asyncio.run(upper.translate([{"id": "1", "source": source}], CONFIG))[0]["predicted"])
        asyncio.run(upper.aclose())
        gc.collect()
    """
    done = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", script,
                           str(Path(__file__).parent)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "A\nB\n"), done.stderr
    assert "ResourceWarning" not in done.stderr and "unclosed" not in done.stderr, done.stderr


def test_a_guest_closed_in_one_asyncio_run_lets_the_next_one_translate():
    """aclose() in one ``asyncio.run``, translate in the next: a new guest answers (before: AttributeError from the
    pipes aclose had closed already, as the ended guest was ended again)."""
    upper = method()

    async def translate_and_close() -> str:
        done = await upper.translate([{"id": "1", "source": "a"}], CONFIG)
        await upper.aclose()
        return str(done[0]["predicted"])

    assert asyncio.run(translate_and_close()) == "A"
    first = upper._connection.pid  # type: ignore[union-attr]
    assert asyncio.run(upper.translate([{"id": "1", "source": "b"}], CONFIG))[0]["predicted"] == "B"
    assert first is not None and not alive(first)
    asyncio.run(upper.aclose())
    gc.collect()


def test_a_guest_closed_and_started_again_is_no_restart_and_never_exhausts_the_crash_loop_budget(
        caplog: pytest.LogCaptureFixture):
    """start() then aclose(), five times, then translate: each start is a new guest, not a restart of a crashed one
    (before: "restarting guest … after: the guest exited with code 0" each time, and the fourth start failed with
    "the guest's crash-loop budget is exhausted (3 restarts within 60 s); it last failed: unknown")."""
    upper = method()

    async def start_and_close_five_times_then_translate() -> list[dict]:
        for _ in range(5):
            await upper.start(CONFIG)
            await upper.aclose()
        try:
            return await upper.translate([{"id": "1", "source": "a"}], CONFIG)
        finally:
            await upper.aclose()

    assert asyncio.run(start_and_close_five_times_then_translate())[0]["predicted"] == "A"
    assert upper.restarts == 0
    assert "restarting guest" not in caplog.text
    gc.collect()
