"""The event loop methods run on: uvloop where it is installed, asyncio's own with MT_EVAL_EVENT_LOOP=asyncio —
in-process (`mt-eval translate`, `mt-eval run`) and in a Python guest (`mt-eval serve`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from mt_eval import event_loop
from mt_eval.errors import UsageError
from mt_eval.loader import load_method

pytest.importorskip("uvloop")

LOOP_REPORTER = '''
import asyncio


class LoopReporter:
    async def translate(self, entries, config):
        loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
        return [{"id": e["id"], "predicted": loop} for e in entries]
'''
MANIFEST = {"name": "Loop reporter", "entry_point": "pipeline:LoopReporter", "dependency_class": "S",
            "dependencies": [], "supported_pairs": ["eng>spa"]}


@pytest.fixture
def reporter(make_plugin) -> Path:
    return make_plugin(MANIFEST, {"pipeline.py": LOOP_REPORTER})


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_methods_run_on_uvloop_unless_asyncio_is_asked_for(monkeypatch):
    monkeypatch.delenv(event_loop.CHOICE_VARIABLE, raising=False)
    assert event_loop.use_uvloop() and event_loop.run(_loop_module) == "uvloop"
    monkeypatch.setenv(event_loop.CHOICE_VARIABLE, "asyncio")
    assert not event_loop.use_uvloop() and event_loop.run(_loop_module) == "asyncio"
    monkeypatch.setenv(event_loop.CHOICE_VARIABLE, " UVLOOP ")
    loop = event_loop.new_event_loop()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_an_unknown_loop_is_refused_with_the_choices(monkeypatch, reporter):
    monkeypatch.setenv(event_loop.CHOICE_VARIABLE, "trio")
    with pytest.raises(UsageError, match=r"MT_EVAL_EVENT_LOOP='trio'.*use uvloop or asyncio"):
        event_loop.use_uvloop()
    # the command line names it before any work, as the user's mistake (not the method's)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(reporter), "hello"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("mt-eval translate: MT_EVAL_EVENT_LOOP='trio' is not an event loop mt-eval "
                                   "knows: use uvloop or asyncio")


@pytest.mark.parametrize(("choice", "expected"), [(None, "uvloop"), ("asyncio", "asyncio")])
def test_the_cli_and_a_python_guest_run_the_method_on_the_chosen_loop(reporter, monkeypatch, choice, expected):
    env = {k: v for k, v in os.environ.items() if k != event_loop.CHOICE_VARIABLE}
    if choice:
        env[event_loop.CHOICE_VARIABLE] = choice
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(reporter), "hello", "--json"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["predicted"] == expected
    # the same plugin in a guest process of its own (`mt-eval serve`), hosted from this test's asyncio loop
    if choice:
        monkeypatch.setenv(event_loop.CHOICE_VARIABLE, choice)
    else:
        monkeypatch.delenv(event_loop.CHOICE_VARIABLE, raising=False)

    async def through_a_guest() -> str:
        method = load_method(reporter, isolate=True).method
        try:
            results = await method.translate([{"id": "1", "source": "hello"}], {"source_lang": "eng",
                                                                                "target_lang": "spa"})
        finally:
            await method.aclose()
        return str(results[0]["predicted"])

    assert asyncio.run(through_a_guest()) == expected


@pytest.mark.parametrize("choice", ["uvloop", "asyncio"])
def test_the_loop_is_closed_without_waiting_for_ever_for_a_task_that_ignores_cancellation(monkeypatch, choice):
    async def stubborn() -> None:
        while True:
            with contextlib.suppress(asyncio.CancelledError):  # (every time)
                await asyncio.sleep(100)

    async def leaves_a_task() -> str:
        asyncio.get_running_loop().create_task(stubborn())
        await asyncio.sleep(0)
        return "done"

    monkeypatch.setenv(event_loop.CHOICE_VARIABLE, choice)
    started, cpu = time.monotonic(), time.process_time()
    assert event_loop.run(leaves_a_task) == "done"
    took = time.monotonic() - started
    assert event_loop.SHUTDOWN_GRACE_S <= took < event_loop.SHUTDOWN_GRACE_S + 1.5
    assert time.process_time() - cpu < 0.5


SLEEPER = '''
import asyncio
import time


class Sleeper:
    async def translate(self, entries, config):
        await asyncio.to_thread(time.sleep, 4)  # (past the call's deadline, and the loop's close)
        return [{"id": e["id"], "predicted": "late"} for e in entries]
'''


@pytest.mark.parametrize("choice", ["uvloop", "asyncio"])
def test_a_thread_of_the_method_still_running_at_the_close_is_one_line_not_a_traceback(make_plugin, choice):
    sleeper = make_plugin({**MANIFEST, "entry_point": "pipeline:Sleeper"}, {"pipeline.py": SLEEPER})
    env = {**os.environ, event_loop.CHOICE_VARIABLE: choice}
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(sleeper), "hello", "--timeout", "1"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1 and done.stdout == "[error] timed out after 1 s (1 s per entry)\n"
    assert "Traceback" not in done.stderr and "Event loop is closed" not in done.stderr
    assert done.stderr.splitlines() == [
        "mt-eval: warning: a thread of the method (asyncio.to_thread, run_in_executor) was still running 2 s after "
        "its calls ended; a method's threads are to end when its calls are cancelled, or in aclose()",
        "mt-eval translate: plugin-0: 1 of 1 entry failed"]


def test_called_where_a_loop_already_runs_it_says_to_use_a_thread(make_plugin):
    """Before: validate_plugin of a Node plugin in a notebook (a loop running) raised asyncio's "Cannot run the event
    loop while another loop is running" and warned of a coroutine never awaited."""
    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match=r"one is already running in this thread \(a notebook, or code under "
                                               r"asyncio\.run\): call it from another thread, e\.g\. `await "
                                               r"asyncio\.to_thread"):
            event_loop.run(_loop_module)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no "coroutine ... was never awaited")
        asyncio.run(inside_a_loop())
