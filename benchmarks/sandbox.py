"""Sandbox and gateway performance, each against its baseline measured in the same run.

- **Sandbox start-up**: what confining a method adds to the start of a run — probing the tool, building
  the file-system view, and starting the guest under bubblewrap until it answers ``initialize`` — against
  starting the same guest unconfined; for a Python and a Node method. Target: ≤ +150 ms.
- **Gateway throughput**: 1,000 one-entry chat-completion requests (16 in flight) through ``mt-eval
  gateway`` (its own process, as a sandboxed guest's calls reach the harness's gateway from another
  process) against the same requests sent straight to the same loopback upstream (an aiohttp server in its
  own process). Both sides use the same client: one aiohttp ``ClientSession`` with a kept-alive pool of 16
  connections, as an OpenAI-style client keeps. Target ≥ 0.7× under two conditions: an upstream that
  answers at once — the gateway's own cost laid bare, the strict reading — and one that takes
  ``--upstream-ms`` (default 25 ms, still faster than any hosted model answers a sentence). Rounds
  alternate direct and gateway, and the ratio is the median of the rounds' ratios, so a burst of load on
  the shared machine shifts both sides of a round. Also shown: the gateway's CPU time per request, and,
  as information, the gateway served from a thread of the client's own process (an unsandboxed in-process
  method, sharing one interpreter lock with it). Every request is checked to have been logged.

Run: ``python benchmarks/sandbox.py`` (``--quick`` for a short run, ``--check`` to exit 1 on a miss). The
load average is printed: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from report import Figure, at_least, at_most, record

from mt_eval.bridge.method import BridgeMethod
from mt_eval.loader import bridge_method, read_plugin
from mt_eval.sandbox import find_tool, plugin_sandbox

ROOT = Path(__file__).resolve().parent.parent
MODEL = "bench-2024-01-01"
PLUGINS = {"python": ROOT / "examples" / "lexicon-eng-spa", "node": ROOT / "examples" / "termbase-eng-spa"}
UPSTREAM = r"""
import asyncio, sys
from aiohttp import web
ANSWER = (b'{"choices":[{"message":{"role":"assistant","content":"Hola."}}],'
          b'"usage":{"prompt_tokens":9,"completion_tokens":2}}')
DELAY = float(sys.argv[1]) / 1000
async def chat(request):
    await request.read()
    if DELAY:
        await asyncio.sleep(DELAY)
    return web.Response(body=ANSWER, content_type="application/json")
app = web.Application()
app.router.add_post("/v1/chat/completions", chat)
runner = web.AppRunner(app, access_log=None)
async def main():
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


async def guest_start(runtime: str, sandboxed: bool) -> float:
    """Seconds from nothing to an initialized guest (with the sandbox: view and command built too)."""
    started = time.perf_counter()
    source, _ = read_plugin(PLUGINS[runtime])
    assert source is not None
    sandbox = plugin_sandbox(source, network="none") if sandboxed else None
    method = bridge_method(source, isolate=True, sandbox=sandbox)
    assert isinstance(method, BridgeMethod)
    await method.start()
    elapsed = time.perf_counter() - started
    await method.aclose()
    return elapsed


def probe_cost(rounds: int) -> float:
    """The once-per-run probe of the sandbox tool (a confined ``true``)."""
    times = []
    for _ in range(rounds):
        find_tool.cache_clear()
        started = time.perf_counter()
        find_tool()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def fire(url: str, total: int, in_flight: int, model: str) -> float:
    """Seconds to complete ``total`` one-entry requests, ``in_flight`` at a time."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "One sentence to translate."}]})
    remaining = iter(range(total))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=in_flight)) as client:
        async def worker() -> None:
            for _ in remaining:
                async with client.post(f"{url}/chat/completions", data=body,
                                       headers={"Content-Type": "application/json"}) as response:
                    await response.read()
                    assert response.status == 200, response.status
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return time.perf_counter() - started


def start_process(argv: list[str], pattern: str, stream: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pipe = process.stdout if stream == "stdout" else process.stderr
    assert pipe is not None
    line = pipe.readline()
    match = re.search(pattern, line)
    if match is None:
        process.kill()
        raise RuntimeError(f"{argv[:4]} did not start: {line}{pipe.read()}")
    return process, match.group(1)


@dataclass
class GatewayFigures:
    direct_s: float  # median seconds for ``total`` requests sent straight to the upstream
    through_s: float  # median seconds for the same through the gateway
    ratio: float  # median of the rounds' direct/through ratios
    gateway_cpu_us: float | None  # the gateway process's CPU time per request (None: it runs in ours)


def process_cpu_s(pid: int) -> float:
    """User plus system CPU seconds a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alternate(direct_url: str, gateway_url: str, total: int, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per round straight to the upstream and through the gateway, alternating (after a warm-up)."""
    asyncio.run(fire(direct_url, 200, 16, MODEL))
    asyncio.run(fire(gateway_url, 200, 16, MODEL))
    direct, through = [], []
    for _ in range(rounds):  # alternating, so a burst of load shifts both
        direct.append(asyncio.run(fire(direct_url, total, 16, MODEL)))
        through.append(asyncio.run(fire(gateway_url, total, 16, MODEL)))
    return direct, through


def summarise(direct: list[float], through: list[float], cpu_us: float | None) -> GatewayFigures:
    return GatewayFigures(statistics.median(direct), statistics.median(through),
                          statistics.median(d / t for d, t in zip(direct, through, strict=True)), cpu_us)


def logged(log: Path, expected: int) -> None:
    lines = log.read_bytes().count(b"\n")
    if lines != expected:
        raise SystemExit(f"the gateway logged {lines} requests of {expected}")


def gateway_figures(work: Path, total: int, rounds: int, upstream_ms: float) -> GatewayFigures:
    """``mt-eval gateway`` in its own process."""
    upstream, port = start_process([sys.executable, "-c", UPSTREAM, str(upstream_ms)], r"(\d+)", "stdout")
    direct_url = f"http://127.0.0.1:{port}/v1"
    policy = work / "policy.json"
    policy.write_text(json.dumps({"base_url": direct_url, "models": [{"id": MODEL}]}))
    log = work / f"gateway-{upstream_ms:g}.jsonl"
    gateway, gateway_url = start_process([sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy),
                                          "--listen", "127.0.0.1:0", "--log", str(log)],
                                         r"serving (http://\S+)", "stderr")
    try:
        cpu = process_cpu_s(gateway.pid)
        direct, through = alternate(direct_url, gateway_url, total, rounds)
        cpu_us = (process_cpu_s(gateway.pid) - cpu) / (200 + total * rounds) * 1e6
    finally:
        gateway.send_signal(signal.SIGINT)  # stops as Ctrl-C does: the log is complete
        gateway.wait(30)
        upstream.terminate()
        upstream.wait(10)
    logged(log, 200 + total * rounds)
    return summarise(direct, through, cpu_us)


def threaded_gateway_figures(work: Path, total: int, rounds: int) -> GatewayFigures:
    """The gateway served from a thread of this process (`GatewayThread`, as an unsandboxed run serves it)."""
    from mt_eval.gateway.audit import AuditLog
    from mt_eval.gateway.policy import GatewayPolicy, ModelRoute
    from mt_eval.gateway.server import Gateway, GatewayThread

    upstream, port = start_process([sys.executable, "-c", UPSTREAM, "0"], r"(\d+)", "stdout")
    direct_url = f"http://127.0.0.1:{port}/v1"
    log = work / "gateway-thread.jsonl"
    thread = GatewayThread(Gateway(GatewayPolicy(models=[ModelRoute(id=MODEL)], base_url=direct_url), AuditLog(log)))
    try:
        gateway_url = thread.start()
        direct, through = alternate(direct_url, gateway_url, total, rounds)
    finally:
        thread.stop()
        upstream.terminate()
        upstream.wait(10)
    logged(log, 200 + total * rounds)
    return summarise(direct, through, None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--upstream-ms", type=float, default=25.0, metavar="MS",
                        help="how long the slower stand-in upstream takes per completion (default 25)")
    parser.add_argument("--only", choices=("sandbox", "gateway"), help="measure only one of the two")
    args = parser.parse_args()
    starts, instant_rounds, slow_rounds = (5, 5, 2) if args.quick else (15, 11, 3)
    find_tool()
    rows: list[tuple[str, str, str, str, str, bool]] = []
    probe = probe_cost(starts) if args.only != "gateway" else 0.0
    for runtime in PLUGINS if args.only != "gateway" else ():
        plain, confined = [], []
        for _ in range(starts):
            plain.append(asyncio.run(guest_start(runtime, sandboxed=False)))
            confined.append(asyncio.run(guest_start(runtime, sandboxed=True)))
        extra = statistics.median(confined) - statistics.median(plain) + probe
        rows.append((f"sandbox start-up, {runtime} guest", f"{(statistics.median(confined) + probe) * 1e3:8.1f} ms",
                     f"{statistics.median(plain) * 1e3:8.1f} ms", f"{extra * 1e3:+.0f} ms", "<= +150 ms",
                     extra <= 0.150))
    load_before = os.getloadavg()
    figures = [Figure("sandbox", name, ours=ours.strip(), baseline=base.strip(), value=float(ratio[:-3]),
                      target=at_most(150, " ms")) for name, ours, base, ratio, _target, _met in rows]
    info, notes = [], []
    if args.only != "sandbox":
        with tempfile.TemporaryDirectory() as scratch:
            instant = gateway_figures(Path(scratch), 1000, instant_rounds, 0)
            slow = gateway_figures(Path(scratch), 1000, slow_rounds, args.upstream_ms)
            threaded = threaded_gateway_figures(Path(scratch), 1000, instant_rounds)
        for name, measured in (("instant upstream", instant), (f"upstream {args.upstream_ms:g} ms", slow)):
            rows.append((f"gateway req/s, {name}", f"{1000 / measured.through_s:10.0f}",
                         f"{1000 / measured.direct_s:10.0f}", f"{measured.ratio:.2f}x", ">= 0.7x",
                         measured.ratio >= 0.7))
            figures.append(Figure("sandbox", f"gateway req/s, {name}", ours=f"{1000 / measured.through_s:,.0f} req/s",
                                  baseline=f"{1000 / measured.direct_s:,.0f} req/s direct", value=measured.ratio,
                                  target=at_least(0.7)))
        info.append(("gateway in the client's process", f"{1000 / threaded.through_s:10.0f}",
                     f"{1000 / threaded.direct_s:10.0f}", f"{threaded.ratio:.2f}x", "(information: a thread, one GIL)"))
        notes.append(f"gateway CPU per request: {instant.gateway_cpu_us:.0f} µs (instant upstream), "
                     f"{slow.gateway_cpu_us:.0f} µs ({args.upstream_ms:g} ms upstream); each ratio is the median of "
                     f"{instant_rounds} (instant) or {slow_rounds} alternating rounds of 1,000 requests; every "
                     "request was found in the gateway's log")
    record(figures)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average: {load} (before the gateway rounds: {' '.join(f'{v:.2f}' for v in load_before)}); "
          f"{os.cpu_count()} cores; sandbox tool: {find_tool().name} {find_tool().version}; "
          f"probe (once per run, included above): {probe * 1e3:.1f} ms")
    print(f"{'figure':34} {'measured':>14} {'baseline':>14} {'ratio':>9}  target")
    for name, ours, base, ratio, target, met in rows:
        print(f"{name:34} {ours:>14} {base:>14} {ratio:>9}  {target} {'met' if met else 'MISSED'}")
    for name, ours, base, ratio, target in info:
        print(f"{name:34} {ours:>14} {base:>14} {ratio:>9}  {target}")
    for note in notes:
        print(note)
    return 1 if args.check and not all(row[-1] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
