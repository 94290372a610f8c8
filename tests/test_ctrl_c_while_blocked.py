"""Ctrl-C while a method blocks the event loop (``time.sleep`` in an async method, or in its start) stops the
command at once.

The loop's own Ctrl-C handling needs the loop to turn: before, `mt-eval run` went on for the whole blocked call, then
for each call queued behind it (four minutes for a method sleeping 60 s a call). `mt_eval.loop_watchdog` now raises
the interrupt in the blocked call, and in each call that blocks the loop after it, and the command says what it
kept, as after any Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "data" / "eng-spa-demo.json"
DECISIONS = ROOT / "examples" / "data" / "adequacy-decisions.jsonl"
BLOCKS = '''
import sys
import time


class Blocks:
    async def translate(self, entries, config):
        print("blocking the loop", file=sys.stderr, flush=True)
        time.sleep(60)  # (synchronous: the event loop stops with it)
        return [{"id": e["id"], "predicted": "hola"} for e in entries]

    async def decide(self, rows, config):
        print("blocking the loop", file=sys.stderr, flush=True)
        time.sleep(60)
        return []
'''
STARTS = '''
import sys
import time


class Blocks:
    async def start(self, config):  # (as one that loads a model synchronously: as long as it likes)
        print("blocking the loop", file=sys.stderr, flush=True)
        time.sleep(60)

    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "hola"} for e in entries]
'''
TRANSLATES = {"name": "Blocks", "entry_point": "pipeline:Blocks", "dependency_class": "S", "dependencies": [],
              "supported_pairs": ["eng>spa"]}
DECIDES = {**TRANSLATES, "implements": ["decide"], "decide": {"question_types": ["noul", "choice", "score"]}}

WATCHED = """
import asyncio, signal, sys, threading, time
from mt_eval import event_loop
from mt_eval.loop_watchdog import LoopWatchdog

async def main():
    before = signal.getsignal(signal.SIGINT)
    try:
        with LoopWatchdog(60):
            print("ready", flush=True)
            if sys.argv[1] == "blocked":
                time.sleep(30)
            elif sys.argv[1] == "elsewhere":  # Ctrl-C taken by another thread: its handler is only marked due
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                time.sleep(30)
            else:
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:  # (Ctrl-C while the loop turns: the command is cancelled)
                    print("cancelled", flush=True)
                    time.sleep(30)  # winding down, it blocks the loop
    finally:
        print("handler restored:", signal.getsignal(signal.SIGINT) is before, flush=True)

try:
    event_loop.run(main)
except KeyboardInterrupt as stopped:
    print(type(stopped).__name__, flush=True)
"""


def interrupted(command: list[str], *, after: str, wait_s: float, stdin: Any = None
                ) -> tuple[subprocess.Popen[str], float, str]:
    """``command`` sent SIGINT ``wait_s`` after it wrote ``after`` (to stdout or stderr); it, the seconds it took to
    end after that, and all it wrote."""
    with subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        assert process.stdout is not None
        said = ""
        while after not in said:
            line = process.stdout.readline()
            assert line, f"it ended before saying {after!r}: {said}"
            said += line
        time.sleep(wait_s)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            rest, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"still running 30 s after Ctrl-C: {said}")
    return process, time.monotonic() - sent, said + rest


@pytest.mark.parametrize("wait_s", [0.0, 1.5])  # Ctrl-C as the block starts, and once it has lasted a while
def test_ctrl_c_in_a_blocked_call_interrupts_it(wait_s):
    _, took, said = interrupted([sys.executable, "-c", WATCHED, "blocked"], after="ready", wait_s=wait_s)
    assert said.splitlines()[1:] == ["handler restored: True", "InterruptedWhileBlocked"], said
    assert took < 5, took  # (the sleep is 30 s)


@pytest.mark.parametrize("wait_s", [0.0, 1.5])
def test_ctrl_c_that_another_thread_takes_still_interrupts_the_blocked_call(wait_s):
    """As when Ctrl-C comes just before the call blocks (a method's print, then ``time.sleep``): the handler is due,
    but nothing wakes the main thread to run it. Before: the 30 s sleep ran to its end (now and then in `mt-eval
    decide` and `run`, whose methods print just before they block)."""
    _, took, said = interrupted([sys.executable, "-c", WATCHED, "elsewhere"], after="ready", wait_s=wait_s)
    assert said.splitlines()[1:] == ["handler restored: True", "InterruptedWhileBlocked"], said
    assert took < 5, took


def test_a_call_that_blocks_the_loop_after_a_ctrl_c_is_interrupted_too():
    _, took, said = interrupted([sys.executable, "-c", WATCHED, "turning"], after="ready", wait_s=0.2)
    assert said.splitlines()[1:] == ["cancelled", "handler restored: True", "InterruptedWhileBlocked"], said
    assert took < 5, took


@pytest.mark.parametrize(("command", "source"), [
    pytest.param(["run", "--corpus", str(CORPUS), "--latency-sample", "0"], BLOCKS, id="run"),
    pytest.param(["run", "--corpus", str(CORPUS)], BLOCKS, id="run-latency"),  # in the latency calls before the run
    pytest.param(["decide", "run", "--corpus", str(DECISIONS)], BLOCKS, id="decide"),
    pytest.param(["translate", "--pair", "eng:spa"], BLOCKS, id="translate"),
    pytest.param(["run", "--corpus", str(CORPUS), "--latency-sample", "0"], STARTS, id="run-start"),
])
@pytest.mark.parametrize("wait_s", [0.0, 1.5])
def test_ctrl_c_stops_a_command_whose_method_blocks_the_loop(make_plugin, tmp_path, command, source, wait_s):
    plugin = make_plugin(DECIDES if command[0] == "decide" else TRANSLATES, {"pipeline.py": source})
    if command[0] == "translate":
        argv = [*command, str(plugin), "one sentence", "another"]
    else:
        argv = [*command, "--method", str(plugin), "--out", str(tmp_path / "out")]
    process, took, said = interrupted([sys.executable, "-m", "mt_eval.cli", *argv], after="blocking the loop",
                                      wait_s=wait_s)
    assert process.returncode == 130, said
    assert took < 15, took  # (60 s a call, and calls queued behind the first: minutes before)
    assert "Traceback" not in said
    last = said.rstrip().splitlines()[-1]
    assert "interrupted" in last, said
    if command[0] != "translate":
        assert "--resume" in last


DEAF = """
import asyncio
import sys


class Deaf:
    async def translate(self, entries, config):
        print("blocking the loop", file=sys.stderr, flush=True)  # (it does not: it ignores being cancelled)
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                pass
"""


@pytest.mark.parametrize("given", ["pipe", "file"])
@pytest.mark.parametrize("source", [BLOCKS, DEAF], ids=["blocks", "ignores-cancel"])
def test_ctrl_c_stops_serve_whose_method_blocks_or_ignores_it(make_plugin, tmp_path, given, source):
    """``mt-eval serve DIR < requests.jsonl``, or a host's pipe: Ctrl-C waited for a call blocking the loop (its
    first request's, read before Ctrl-C was watched), and for ever for one that ignores being cancelled once the
    input had ended."""
    entry = "pipeline:Deaf" if source is DEAF else "pipeline:Blocks"
    plugin = make_plugin({**TRANSLATES, "entry_point": entry}, {"pipeline.py": source})
    requests = "".join(json.dumps(request) + "\n" for request in [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocol_versions": ["mt-eval-bridge/1"]}},
        {"jsonrpc": "2.0", "id": 1, "method": "translate", "params": {
            "entries": [{"id": "a", "source": "hi"}], "config": {"source_lang": "eng", "target_lang": "spa"}}}])
    read, write = os.pipe()
    if given == "pipe":  # (the host's end stays open)
        os.write(write, requests.encode())
    else:
        (tmp_path / "requests.jsonl").write_text(requests)
    try:
        with (tmp_path / "requests.jsonl").open() if given == "file" else os.fdopen(read) as stdin:
            process, took, said = interrupted([sys.executable, "-m", "mt_eval.cli", "serve", str(plugin)],
                                              after="blocking the loop", wait_s=1.5, stdin=stdin)
    finally:
        os.close(write)
        if given == "file":
            os.close(read)
    assert process.returncode == 130, said
    assert took < 15, took
    assert "Traceback" not in said
