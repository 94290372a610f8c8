"""Stopping ``mt-eval gateway`` with requests in flight: it says it waits for them, a second Ctrl-C stops
waiting, and each unanswered request is answered 503 ``gateway_stopped`` and logged as the gateway's doing."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web

MODEL = "slow-2024-01-01"


class SlowUpstream:
    """A loopback upstream, in a thread of its own, that answers ``delay_s`` after a request arrives."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.arrived = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _serve(self) -> None:
        async def answer(request: web.Request) -> web.Response:
            self.arrived.set()
            await asyncio.sleep(self.delay_s)
            return web.json_response({"choices": [{"message": {"content": "Hola"}}],
                                      "usage": {"prompt_tokens": 1, "completion_tokens": 1}})

        async def start() -> None:
            app = web.Application()
            app.router.add_post("/v1/chat/completions", answer)
            self.runner = web.AppRunner(app, shutdown_timeout=0.5)
            await self.runner.setup()
            await web.TCPSite(self.runner, "127.0.0.1", 0).start()
            self.port = self.runner.addresses[0][1]
            self.ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def ask(url: str, answers: list[tuple[int, dict]]) -> None:
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}).encode()
    request = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answers.append((response.status, json.loads(response.read())))
    except urllib.error.HTTPError as error:
        answers.append((error.code, json.loads(error.read())))


def serve(tmp_path: Path, upstream: SlowUpstream) -> tuple[subprocess.Popen[str], str]:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"base_url": f"http://127.0.0.1:{upstream.port}/v1", "models": [{"id": MODEL}]}))
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy), "--listen",
                                "127.0.0.1:0", "--log", str(tmp_path / "log.jsonl")], stderr=subprocess.PIPE,
                               text=True)
    assert process.stderr is not None
    banner = process.stderr.readline()
    while banner and "serving" not in banner:
        banner = process.stderr.readline()
    return process, re.search(r"serving (http://\S+)", banner).group(1)  # type: ignore[union-attr]


@contextmanager
def a_request_in_flight(tmp_path: Path, delay_s: float) -> Iterator[tuple[subprocess.Popen[str], list, Callable]]:
    """``mt-eval gateway`` with one request in flight to an upstream that answers ``delay_s`` after it arrives:
    (the gateway's process, the answers the client got, a function that waits for the client). Everything started
    is ended when the block ends."""
    upstream = SlowUpstream(delay_s=delay_s)
    process, url = serve(tmp_path, upstream)
    answers: list[tuple[int, dict]] = []
    client = threading.Thread(target=ask, args=(url, answers))
    try:
        client.start()
        assert upstream.arrived.wait(20)
        yield process, answers, lambda: client.join(20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        upstream.stop()


def test_a_second_ctrl_c_answers_the_requests_in_flight_503_and_logs_them(tmp_path: Path):
    with a_request_in_flight(tmp_path, delay_s=30) as (process, answers, client_done):
        process.send_signal(signal.SIGINT)
        assert process.stderr is not None
        said = process.stderr.readline()
        assert "stopping: waiting up to 10 s for 1 request in flight (Ctrl-C again to stop now)" in said
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=20)
        client_done()
        assert time.monotonic() - started < 5  # (not the 10 s grace, nor the upstream's 30 s)
    assert process.returncode == 0, err
    assert "stopping now: 1 unanswered request is answered 503 and logged" in err and "stopped; 1 requests" in err
    assert answers and answers[0][0] == 503 and answers[0][1]["error"]["code"] == "gateway_stopped"
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(r["status"], r["error"]) for r in logged] == [
        (503, "the gateway stopped before the upstream's answer was complete")]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda sig: sig.name)
def test_a_request_in_flight_at_one_ctrl_c_is_answered_when_it_ends_within_the_grace(tmp_path: Path,
                                                                                    sig: signal.Signals):
    """One SIGHUP (the terminal closed) stops it as one Ctrl-C does. Before, on uvloop, the Ctrl-C it is passed on as
    was heard twice: the request in flight was answered 503 at once, without the grace."""
    with a_request_in_flight(tmp_path, delay_s=1) as (process, answers, client_done):
        process.send_signal(sig)
        _out, err = process.communicate(timeout=20)
        client_done()
    assert process.returncode == 0 and "waiting up to 10 s for 1 request in flight" in err, err
    assert answers and answers[0][0] == 200 and answers[0][1]["choices"][0]["message"]["content"] == "Hola"
    assert [r["status"] for r in map(json.loads, (tmp_path / "log.jsonl").read_text().splitlines())] == [200]


async def _upstream(delay_s: float, calls: list[str]) -> tuple[web.AppRunner, int]:
    async def answer(request: web.Request) -> web.Response:
        calls.append((await request.json())["messages"][0]["content"])
        await asyncio.sleep(delay_s)
        return web.json_response({"choices": [{"message": {"content": "Hola"}}],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]


async def _ask(writer: asyncio.StreamWriter, port: int, content: str) -> None:
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]}).encode()
    writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (port, len(body), body))
    await writer.drain()


async def _answer(reader: asyncio.StreamReader) -> tuple[str, bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    length = int(re.search(r"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
    return head, await reader.readexactly(length)


async def test_while_stopping_a_kept_alive_connection_gets_503_and_the_policy_timeout_still_holds(tmp_path: Path):
    """Before, requests on kept-alive connections were still sent upstream after Ctrl-C, and the policy's timeout_s
    stopped counting: a request the upstream never answered waited out the whole grace period."""
    from mt_eval.gateway.audit import AuditLog
    from mt_eval.gateway.policy import GatewayPolicy, ModelRoute
    from mt_eval.gateway.server import Gateway

    calls: list[str] = []
    runner, upstream = await _upstream(30, calls)
    policy = GatewayPolicy(models=[ModelRoute(id=MODEL)], base_url=f"http://127.0.0.1:{upstream}/v1", timeout_s=1.5)
    gateway = Gateway(policy, AuditLog(tmp_path / "log.jsonl"))
    port = int((await gateway.start()).split(":")[2].split("/")[0])
    idle = await asyncio.open_connection("127.0.0.1", port)
    busy = await asyncio.open_connection("127.0.0.1", port)
    try:
        await _ask(busy[1], port, "in flight")
        while not calls:  # noqa: ASYNC110 (the upstream has it)
            await asyncio.sleep(0.01)
        began = time.monotonic()
        closing = asyncio.ensure_future(gateway.close(grace_s=10))
        await asyncio.sleep(0.1)
        await _ask(idle[1], port, "after Ctrl-C")  # (on a connection kept alive: not sent upstream)
        head, body = await _answer(idle[0])
        assert head.startswith("HTTP/1.1 503") and "Connection: close" in head
        assert json.loads(body)["error"]["code"] == "gateway_stopped"
        head, body = await _answer(busy[0])  # (its timeout_s, 1.5 s, not the 10 s of grace)
        assert head.startswith("HTTP/1.1 504") and "Connection: close" in head
        await closing
        assert time.monotonic() - began < 5
    finally:
        for _, writer in (idle, busy):
            writer.close()
        await runner.cleanup()
    assert calls == ["in flight"]
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert sorted((r["status"], r["refused"] is not None) for r in logged) == [(503, True), (504, False)]
