"""A method that catches CancelledError cannot hold up `mt-eval run`, `translate`, `locales` or `decide run`: a call
it will not let go of fails its entries at the timeout and a short grace, is abandoned, and neither the run,
Ctrl-C nor the event loop's shutdown waits for it."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.harness.runcard import RunCard

STUBBORN = '''
import asyncio
from pathlib import Path


def translated(entries):
    return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]


class Swallows:
    """On a BAD source, catches every cancellation and waits again, for ever."""

    async def translate(self, entries, config):
        if any("BAD" in e["source"] for e in entries):
            Path(__file__).with_name("waiting").touch()  # (for the tests that interrupt it)
            while True:
                try:
                    await asyncio.sleep(100)
                except asyncio.CancelledError:
                    pass
        return translated(entries)


class SwallowsEverything:
    """On a BAD source, catches everything (``except BaseException``) and waits again, for ever."""

    async def translate(self, entries, config):
        if any("BAD" in e["source"] for e in entries):
            while True:
                try:
                    await asyncio.sleep(100)
                except BaseException:
                    pass
        return translated(entries)


class CatchesOnce:
    """On a BAD source, catches the first cancellation, then keeps busy without blocking the loop."""

    async def translate(self, entries, config):
        if any("BAD" in e["source"] for e in entries):
            try:
                await asyncio.sleep(100)
            except asyncio.CancelledError:
                pass
            while True:
                await asyncio.sleep(0)
        return translated(entries)


class AwaitsInFinally:
    """On a BAD source, waits again in ``finally:`` once cancelled."""

    async def translate(self, entries, config):
        if any("BAD" in e["source"] for e in entries):
            try:
                await asyncio.sleep(100)
            finally:
                await asyncio.sleep(100)
        return translated(entries)


class LeavesATask:
    """Translates at once, leaving behind a task that catches every cancellation (the loop's shutdown meets it)."""

    async def translate(self, entries, config):
        if not hasattr(self, "task"):
            self.task = asyncio.get_running_loop().create_task(self._forever())
        return translated(entries)

    async def _forever(self):
        Path(__file__).with_name("waiting").touch()
        while True:
            try:
                await asyncio.sleep(100)
            except asyncio.CancelledError:
                pass
'''
SOURCES = ["Good morning.", "BAD now", "Good night."]
DECIDES = '''
import asyncio


class SwallowsDeciding:
    """Every option equally likely, but on a row whose state says "BAD": catches every cancellation, for ever."""

    async def decide(self, rows, config):
        if any(row["state"].get("BAD") for row in rows):
            while True:
                try:
                    await asyncio.sleep(100)
                except asyncio.CancelledError:
                    pass
        return [{"id": row["id"], "answers": {"n": {"probabilities": {"true": 0.5, "false": 0.5}}}} for row in rows]
'''


def plugin(tmp_path: Path, kind: str) -> Path:
    directory = tmp_path / kind.lower()
    directory.mkdir()
    (directory / "pipeline.py").write_text(STUBBORN)
    (directory / "method.json").write_text(json.dumps({
        "name": kind, "method_id": kind.lower(), "entry_point": f"pipeline:{kind}", "supported_pairs": ["eng>spa"],
        "dependency_class": "S", "dependencies": []}))
    return directory


def run_command(tmp_path: Path, method: Path, *args: str, sources: list[str] = SOURCES) -> list[str]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "source": s, "reference": s.lower()}) + "\n"
                              for i, s in enumerate(sources, start=1)))
    return [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus", str(corpus), "--pair",
            "eng>spa", "--out", str(tmp_path / "out"), "--quiet", "--resamples", "100", *LENIENT, *args]


def card_of(tmp_path: Path) -> RunCard | None:
    path = tmp_path / "out" / "card.json"
    return msgspec.json.decode(path.read_bytes(), type=RunCard) if path.exists() else None


def finished(command: list[str], limit_s: float) -> tuple[subprocess.CompletedProcess[str], float]:
    """``command``'s outcome and how long it took; it failed when it spun (busy for most of that time)."""
    started, cpu = time.monotonic(), _children_cpu_s()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s)
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"still running after {limit_s:g} s (killed); stderr: {hung.stderr!r}")
    took, busy = time.monotonic() - started, _children_cpu_s() - cpu
    assert busy < max(3.0, took / 2), f"busy {busy:.1f} s of {took:.1f} s: something spins"
    return done, took


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def logged(tmp_path: Path) -> dict[str, dict]:
    path = tmp_path / "out" / "results.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return {r["id"]: r for r in map(json.loads, lines)}


@pytest.mark.parametrize("kind", ["Swallows", "SwallowsEverything"])
def test_a_method_that_swallows_cancellation_fails_its_entry_at_the_timeout_and_the_run_ends(tmp_path: Path,
                                                                                              kind: str):
    command = run_command(tmp_path, plugin(tmp_path, kind), "--timeout", "1", "--retries", "0",
                          "--latency-sample", "0")
    done, took = finished(command, 90)
    card = card_of(tmp_path)
    assert card is not None, done.stderr
    assert done.returncode == 3 and card.status == "partial" and card.errors == 1
    assert [r.predicted for r in card.results] == ["GOOD MORNING.", None, "GOOD NIGHT."]
    error = card.results[1].error or ""
    assert error.startswith("timed out after ") and "did not stop when cancelled: it catches CancelledError" in error
    assert "run it with --isolate so it can be killed" in error
    assert took < 45  # the 3-entry batch, its halves, entry 2 alone: each its timeout and a short grace


@pytest.mark.parametrize("kind", ["CatchesOnce", "AwaitsInFinally"])
def test_a_method_slow_to_let_go_of_a_cancellation_times_out_as_usual(tmp_path: Path, kind: str):
    command = run_command(tmp_path, plugin(tmp_path, kind), "--timeout", "1", "--retries", "0",
                          "--latency-sample", "0")
    done, took = finished(command, 90)
    card = card_of(tmp_path)
    assert card is not None, done.stderr
    assert done.returncode == 3 and [r.predicted for r in card.results] == ["GOOD MORNING.", None, "GOOD NIGHT."]
    assert card.results[1].error == "timed out after 1 s (1 s per entry)"
    assert took < 45


def test_the_latency_calls_stop_at_a_call_that_swallows_cancellation(tmp_path: Path):
    command = run_command(tmp_path, plugin(tmp_path, "Swallows"), "--timeout", "1", "--retries", "0",
                          "--latency-sample", "3", sources=["BAD first", *SOURCES])
    done, took = finished(command, 90)
    card = card_of(tmp_path)
    assert card is not None, done.stderr
    assert done.returncode == 3 and card.errors == 2
    assert (card.latency.cold_failed or "").startswith("timed out after 1 s")
    assert "did not stop when cancelled" in (card.latency.cold_failed or "")
    assert (card.latency.stopped or "").startswith("call 1 of 13 timed out after 1 s")
    assert took < 60


def test_a_task_left_behind_that_swallows_cancellation_does_not_hold_up_the_end(tmp_path: Path):
    command = run_command(tmp_path, plugin(tmp_path, "LeavesATask"), "--latency-sample", "0")
    done, took = finished(command, 60)
    card = card_of(tmp_path)
    assert done.returncode == 0 and card is not None and card.status == "complete", done.stderr
    assert took < 30
    translated, _ = finished([sys.executable, "-m", "mt_eval.cli", "translate", str(tmp_path / "leavesatask"),
                              "hello"], 30)
    assert translated.returncode == 0 and translated.stdout == "HELLO\n", translated.stderr


def test_mt_eval_locales_is_not_held_up_by_a_task_left_behind_either(tmp_path: Path):
    methods = tmp_path / "project" / ".champollion" / "methods"
    methods.mkdir(parents=True)
    plugin(tmp_path, "LeavesATask").rename(methods / "leaves")
    (tmp_path / "project" / "champollion.config.json").write_text(json.dumps({
        "version": 3, "inputLocale": "en", "localesDir": "locales", "pairs": {"en:es": {"methodPlugin": "leaves"}}}))
    (tmp_path / "project" / "locales").mkdir()
    (tmp_path / "project" / "locales" / "en.json").write_text(json.dumps({"greeting": "Hello"}))
    done, took = finished([sys.executable, "-m", "mt_eval.cli", "locales", "--config", str(tmp_path / "project"),
                           "--quiet"], 60)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "project" / "locales" / "es.json").read_text()) == {"greeting": "HELLO"}
    assert took < 30


def test_a_decision_method_that_swallows_cancellation_fails_its_rows_at_the_timeout(tmp_path: Path):
    method = tmp_path / "decides"
    method.mkdir()
    (method / "pipeline.py").write_text(DECIDES)
    (method / "method.json").write_text(json.dumps({
        "name": "Decides", "entry_point": "pipeline:SwallowsDeciding", "implements": ["decide"],
        "dependency_class": "S", "dependencies": []}))
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text("".join(json.dumps({
        "id": f"r{i}", "state": {"text": "x", "BAD": i == 1}, "questions": {"n": {"type": "noul", "instructions": "?"}},
        "gold": {"n": True}}) + "\n" for i in range(3)))
    done, took = finished([sys.executable, "-m", "mt_eval.cli", "decide", "run", "--method", str(method), "--corpus",
                           str(corpus), "--out", str(tmp_path / "out"), "--quiet", "--resamples", "100",
                           "--timeout", "1", "--batch-size", "1"], 60)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "card.json").read_text())["results"]
    assert [r["error"] is None for r in results] == [True, False, True]
    assert results[1]["error"].startswith("timed out after 1 s (1 s per row), and the method did not stop when "
                                          "cancelled: it catches CancelledError")
    assert took < 30


def interrupted(command: list[str], ready: Callable[[], bool], limit_s: float = 30, pause_s: float = 0.5
                ) -> tuple[int, str, float]:
    """Start ``command``, send it SIGINT once ``ready()``, and return its exit status, stderr and how long the
    interrupt took to end it."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()[1]
        time.sleep(pause_s)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            _, err = process.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"Ctrl-C did not end it within {limit_s:g} s")
        return process.returncode, err, time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_ctrl_c_ends_a_run_stuck_on_a_method_that_swallows_cancellation(tmp_path: Path):
    command = run_command(tmp_path, plugin(tmp_path, "Swallows"), "--timeout", "600", "--batch-size", "1",
                          "--concurrency", "1", "--latency-sample", "0")
    code, err, took = interrupted(command, (tmp_path / "swallows" / "waiting").exists)
    assert code == 130, err
    assert took < 15
    assert logged(tmp_path)["1"]["predicted"] == "GOOD MORNING."  # kept, for --resume


def test_ctrl_c_while_the_loop_waits_for_a_task_left_behind_ends_it_at_once_and_quietly(tmp_path: Path):
    method = plugin(tmp_path, "LeavesATask")
    code, err, took = interrupted([sys.executable, "-m", "mt_eval.cli", "translate", str(method), "hello"],
                                  (method / "waiting").exists, pause_s=0.2)
    assert code == 130 and took < 1.5, err  # (not 0, after the 2 s the shutdown waits at most)
    assert err == ("\nmt-eval translate: interrupted; printed the first 1 of 1 lines (each translated, or why not); "
                   "translate the rest again\n")  # not "Task was destroyed but it is pending!"


def test_ctrl_c_ends_a_latency_call_and_the_translate_command_stuck_on_such_a_method(tmp_path: Path):
    method = plugin(tmp_path, "Swallows")
    command = run_command(tmp_path, method, "--timeout", "600", sources=["BAD first", *SOURCES])
    waiting = method / "waiting"
    code, err, took = interrupted(command, waiting.exists)
    assert code == 130 and took < 15, err
    assert not logged(tmp_path)  # interrupted in the cold latency call, before any entry
    waiting.unlink()
    translate = [sys.executable, "-m", "mt_eval.cli", "translate", str(method), "BAD now"]
    code, err, took = interrupted(translate, waiting.exists)
    assert code == 130 and took < 15, err
