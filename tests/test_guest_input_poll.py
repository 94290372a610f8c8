"""After a guest has answered everything it was asked, it polls its input for a moment (``MT_EVAL_GUEST_POLL_US``,
200 µs by default) before sleeping in the event loop, so that a caller's next request is read as it arrives."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import mt_eval.bridge.guest as guest_module
import mt_eval.bridge.input_poll as input_poll
from mt_eval.bridge.guest import GuestServer
from mt_eval.bridge.input_poll import PollWorth, can_poll, poll_input, poll_seconds, usable_cpus
from mt_eval.errors import UsageError

REPO = Path(__file__).resolve().parents[1]
CONFIG = {"source_lang": "eng", "target_lang": "spa"}


# --- the setting ---

@pytest.mark.parametrize(("given", "seconds"), [(None, 200e-6), ("", 200e-6), ("0", 0.0), (" 350 ", 350e-6),
                                                ("10000", 0.01)])
def test_the_poll_time_comes_from_the_environment_in_microseconds(given, seconds):
    environ = {} if given is None else {"MT_EVAL_GUEST_POLL_US": given}
    assert poll_seconds(environ) == pytest.approx(seconds)


@pytest.mark.parametrize("given", ["abc", "-5", "1.5", "10001", "2e3"])
def test_a_poll_time_that_is_not_whole_microseconds_up_to_ten_thousand_is_refused_by_name(given):
    with pytest.raises(UsageError) as raised:
        poll_seconds({"MT_EVAL_GUEST_POLL_US": given})
    assert f"MT_EVAL_GUEST_POLL_US={given!r}" in str(raised.value)
    assert "0 turns polling off" in str(raised.value)


def test_mt_eval_serve_refuses_an_unusable_poll_time_before_loading_the_plugin():
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "serve", str(REPO / "examples" / "lexicon-eng-spa")],
                          input=b"", capture_output=True, timeout=60,
                          env={**os.environ, "MT_EVAL_GUEST_POLL_US": "fast"})
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"mt-eval serve: MT_EVAL_GUEST_POLL_US='fast' is not a number of microseconds" in done.stderr


# --- reading without blocking ---

@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):  # (a test may have closed it)
            os.close(fd)


def test_a_poll_returns_what_arrives_within_its_time(pipe):
    read_end, write_end = pipe
    writer = threading.Timer(0.01, os.write, (write_end, b"next request\n"))
    writer.start()
    try:
        assert poll_input(read_end, 5.0) == b"next request\n"
    finally:
        writer.join()


def test_a_poll_with_nothing_arriving_gives_up_after_its_time(pipe):
    read_end, _ = pipe
    started = time.perf_counter()
    assert poll_input(read_end, 0.02) == b""
    assert time.perf_counter() - started >= 0.02


def test_a_poll_at_the_end_of_the_input_returns_at_once_and_leaves_the_end_to_the_loop(pipe):
    read_end, write_end = pipe
    os.close(write_end)
    started = time.perf_counter()
    assert poll_input(read_end, 5.0) == b""
    assert time.perf_counter() - started < 1.0


def test_only_an_input_that_cannot_block_is_polled(pipe):
    read_end, write_end = pipe
    assert can_poll(read_end)
    assert not can_poll(write_end)  # (a blocking descriptor: a read would wait)
    os.close(write_end)
    assert not can_poll(-1)


# --- the guest ---

class _Gated:
    """Answers at once, except a source of "wait", which is answered when the test opens the gate."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        if entries[0]["source"] == "wait":
            await self.gate.wait()
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]


def _request(request_id: int, method: str = "translate", source: str = "hello") -> bytes:
    params: dict[str, Any] = ({"protocol_versions": ["mt-eval-bridge/1"]} if method == "initialize" else
                              {"entries": [{"id": "e", "source": source}], "config": CONFIG})
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + b"\n"


class _Guest:
    """A GuestServer on two real pipes, as `mt-eval serve` runs it, with every poll of its input recorded."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, microseconds: int, cpus: int = 2) -> None:
        monkeypatch.setenv("MT_EVAL_GUEST_POLL_US", str(microseconds))
        monkeypatch.setattr(input_poll, "usable_cpus", lambda: cpus)  # (whatever this machine has)
        self.polls: list[bytes] = []

        def recorded(fd: int, seconds: float) -> bytes:
            data = poll_input(fd, seconds)
            self.polls.append(data)
            return data

        monkeypatch.setattr(guest_module, "poll_input", recorded)
        self.method = _Gated()
        self.server = GuestServer(self.method, name="gated", method_id="gated")
        self.to_guest, self.guest_in = os.pipe()[::-1]
        self.from_guest, guest_out = os.pipe()
        self.task = asyncio.get_running_loop().create_task(self.server.run(guest_out, self.guest_in))
        self.answers: list[dict[str, Any]] = []
        self.buffer = b""

    def send(self, data: bytes) -> None:
        os.write(self.to_guest, data)

    def read_answer(self) -> dict[str, Any]:
        """The next answer, waited for (in a thread of the test: the guest's loop may be busy polling)."""
        while b"\n" not in self.buffer:
            self.buffer += os.read(self.from_guest, 1 << 16)
        line, self.buffer = self.buffer.split(b"\n", 1)
        return msgspec.json.decode(line)  # type: ignore[no-any-return]

    async def answer(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.read_answer)

    def call_one_after_another(self, count: int) -> list[tuple[int, str]]:
        """A sequential caller: each request sent the moment the last answer is read."""
        answers = []
        for request_id in range(1, count + 1):
            self.send(_request(request_id, source=f"call {request_id}"))
            answer = self.read_answer()
            answers.append((answer["id"], answer["result"]["results"][0]["predicted"]))
        return answers

    async def close(self) -> None:
        os.close(self.to_guest)
        await asyncio.wait_for(self.task, 10)
        os.close(self.from_guest)


async def test_a_request_sent_while_the_guest_polls_is_read_by_the_poll_and_answered(monkeypatch):
    guest = _Guest(monkeypatch, 10_000)
    guest.send(_request(0, "initialize"))
    assert (await guest.answer())["id"] == 0
    answers = await asyncio.to_thread(guest.call_one_after_another, 20)
    assert answers == [(i, f"CALL {i}") for i in range(1, 21)]
    await guest.close()
    assert any(guest.polls), "no request was read by a poll"


async def test_a_request_split_across_a_poll_and_the_loop_is_answered_whole(monkeypatch):
    guest = _Guest(monkeypatch, 10_000)
    guest.send(_request(0, "initialize"))
    await guest.answer()
    line = _request(1, source="split in two")
    guest.send(line[:20])  # half of it is read by the poll, the rest by the loop
    await asyncio.sleep(0.05)
    guest.send(line[20:])
    answer = await guest.answer()
    assert answer["result"]["results"][0]["predicted"] == "SPLIT IN TWO"
    await guest.close()


async def test_the_guest_does_not_poll_while_a_request_is_in_flight(monkeypatch):
    guest = _Guest(monkeypatch, 10_000)
    guest.send(_request(0, "initialize"))
    await guest.answer()
    polls_when_idle = len(guest.polls)
    guest.send(_request(1, source="wait"))
    await asyncio.sleep(0.05)
    guest.send(_request(2, source="quick"))
    assert (await guest.answer())["id"] == 2
    await asyncio.sleep(0.05)
    assert len(guest.polls) == polls_when_idle  # the slow request is still in flight: the loop waits for it
    guest.method.gate.set()
    assert (await guest.answer())["id"] == 1
    await asyncio.sleep(0.05)
    assert len(guest.polls) == polls_when_idle + 1  # everything answered: now it polls
    await guest.close()


async def test_polling_turned_off_never_polls(monkeypatch):
    guest = _Guest(monkeypatch, 0)
    guest.send(_request(0, "initialize"))
    await guest.answer()
    guest.send(_request(1))
    await guest.answer()
    await guest.close()
    assert guest.polls == []


async def test_a_host_closing_the_input_while_the_guest_polls_ends_the_guest(monkeypatch):
    guest = _Guest(monkeypatch, 10_000)
    guest.send(_request(0, "initialize") + _request(1))
    await guest.answer()
    await guest.answer()
    started = time.perf_counter()
    await guest.close()  # (within the poll's 10 ms, or after it)
    assert time.perf_counter() - started < 5


# --- not on one CPU ---

def test_polling_is_worth_it_on_several_cpus_only_and_the_count_is_asked_again_after_a_while(monkeypatch):
    monkeypatch.setattr(input_poll, "RECHECK_S", 0.05)
    counts = [1, 2]
    asked: list[int] = []

    def cpus() -> int:
        asked.append(counts[0])
        return counts[0]

    worth = PollWorth(cpus)
    assert not worth()
    assert not worth()
    assert len(asked) == 1  # (not a system call per poll)
    counts[0] = 2  # the affinity widened meanwhile (`taskset -p`)
    time.sleep(0.06)
    assert worth()
    assert len(asked) == 2


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_the_cpus_counted_are_those_the_affinity_allows():
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(before)})
        assert usable_cpus() == 1
    finally:
        os.sched_setaffinity(0, before)
    assert usable_cpus() == len(before)


async def test_a_guest_that_may_run_on_one_cpu_does_not_poll_and_answers_as_before(monkeypatch):
    guest = _Guest(monkeypatch, 10_000, cpus=1)
    guest.send(_request(0, "initialize"))
    assert (await guest.answer())["id"] == 0
    answers = await asyncio.to_thread(guest.call_one_after_another, 5)
    assert answers == [(i, f"CALL {i}") for i in range(1, 6)]
    await guest.close()
    assert guest.polls == []  # its host can only run while it does not: a poll would only hold the host up


CPU_CLOCK = """
import time

class Clock:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"], "metadata": {"cpu_s": time.process_time()}} for e in entries]
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_mt_eval_serve_pinned_to_one_cpu_spends_no_cpu_polling_between_calls(tmp_path):
    (tmp_path / "pipeline.py").write_text(CPU_CLOCK)
    (tmp_path / "method.json").write_text('{"name": "Clock", "entry_point": "pipeline:Clock", "dependencies": []}')
    cpu = min(os.sched_getaffinity(0))
    guest = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "serve", str(tmp_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env={**os.environ, "MT_EVAL_GUEST_POLL_US": "10000"},
                             preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))  # (as `taskset -c CPU` starts it)
    assert guest.stdin is not None and guest.stdout is not None

    def call(request: bytes) -> dict[str, Any]:
        guest.stdin.write(request)  # type: ignore[union-attr]
        guest.stdin.flush()  # type: ignore[union-attr]
        return msgspec.json.decode(guest.stdout.readline())  # type: ignore[union-attr,no-any-return]

    try:
        call(_request(0, "initialize"))
        first = call(_request(1))["result"]["results"][0]["metadata"]["cpu_s"]
        for request_id in range(2, 12):
            time.sleep(0.03)
            last = call(_request(request_id))["result"]["results"][0]["metadata"]["cpu_s"]
    finally:
        guest.stdin.close()
        guest.wait(30)
        guest.stdout.close()
    # polling, it would spend its 10 ms after each of the 10 answers, 100 ms (the Node guest's test shows the
    # contrast); the answers themselves take a few ms, more on a busy machine
    assert last - first < 0.05, f"{(last - first) * 1e3:.1f} ms of CPU over 10 pauses of 30 ms"
