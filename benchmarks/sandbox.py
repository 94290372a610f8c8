"""Sandbox and gateway performance, each against its baseline measured in the same run.

- **Sandbox start-up**: what confining a method adds to the start of a run — probing the tool, building
  the file-system view, and starting the guest under bubblewrap until it answers ``initialize`` — against
  starting the same guest unconfined; for a Python and a Node method. Target: ≤ +150 ms.
- **Gateway throughput**: 1,000 one-entry chat-completion requests (16 in flight) through ``mt-eval
  gateway`` against the same requests sent straight to the same loopback upstream (an aiohttp stand-in in
  its own process). Target: ≥ 0.7×, with the upstream answering each request after ``--upstream-ms``
  (default 25 ms — faster than any hosted model answers a sentence). The same is also printed against an
  upstream that answers at once, as information: that isolates the gateway's own cost (it does a second
  HTTP exchange in Python per request), which no real model hides less than this.

Run: ``python benchmarks/sandbox.py`` (``--quick`` for a short run, ``--check`` to exit 1 on a miss). The
load average is printed: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from report import Figure, at_least, at_most, record

from mt_eval.bridge.method import BridgeMethod
from mt_eval.loader import bridge_method, read_plugin
from mt_eval.sandbox import find_tool, plugin_sandbox

ROOT = Path(__file__).resolve().parent.parent
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


def gateway_figures(work: Path, total: int, rounds: int, upstream_ms: float) -> tuple[float, float]:
    upstream, port = start_process([sys.executable, "-c", UPSTREAM, str(upstream_ms)], r"(\d+)", "stdout")
    direct_url = f"http://127.0.0.1:{port}/v1"
    policy = work / "policy.json"
    policy.write_text(json.dumps({"base_url": direct_url, "models": [{"id": "bench-2024-01-01"}]}))
    gateway, gateway_url = start_process([sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy),
                                          "--listen", "127.0.0.1:0", "--log", str(work / "gateway.jsonl")],
                                         r"serving (http://\S+)", "stderr")
    try:
        asyncio.run(fire(direct_url, 200, 16, "bench-2024-01-01"))
        asyncio.run(fire(gateway_url, 200, 16, "bench-2024-01-01"))
        direct, through = [], []
        for _ in range(rounds):  # alternating, so a burst of load shifts both
            direct.append(asyncio.run(fire(direct_url, total, 16, "bench-2024-01-01")))
            through.append(asyncio.run(fire(gateway_url, total, 16, "bench-2024-01-01")))
    finally:
        for process in (gateway, upstream):
            process.terminate()
            process.wait(10)
    return statistics.median(direct), statistics.median(through)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--upstream-ms", type=float, default=25.0, metavar="MS",
                        help="how long the stand-in upstream takes per completion (default 25)")
    args = parser.parse_args()
    rounds, starts = (3, 5) if args.quick else (5, 15)
    find_tool()
    rows = []
    probe = probe_cost(starts)
    for runtime in PLUGINS:
        plain, confined = [], []
        for _ in range(starts):
            plain.append(asyncio.run(guest_start(runtime, sandboxed=False)))
            confined.append(asyncio.run(guest_start(runtime, sandboxed=True)))
        extra = statistics.median(confined) - statistics.median(plain) + probe
        rows.append((f"sandbox start-up, {runtime} guest", f"{(statistics.median(confined) + probe) * 1e3:8.1f} ms",
                     f"{statistics.median(plain) * 1e3:8.1f} ms", f"{extra * 1e3:+.0f} ms", "<= +150 ms",
                     extra <= 0.150))
    with tempfile.TemporaryDirectory() as scratch:
        direct, through = gateway_figures(Path(scratch), 1000, rounds, args.upstream_ms)
        instant_direct, instant_through = gateway_figures(Path(scratch), 1000, rounds, 0)
    figures = [Figure("sandbox", name, ours=ours.strip(), baseline=base.strip(), value=float(ratio[:-3]),
                      target=at_most(150, " ms")) for name, ours, base, ratio, _target, _met in rows]
    figures.append(Figure("sandbox", f"gateway req/s, upstream {args.upstream_ms:g} ms",
                          ours=f"{1000 / through:,.0f} req/s", baseline=f"{1000 / direct:,.0f} req/s direct",
                          value=direct / through, target=at_least(0.7),
                          note=f"instant upstream: {instant_direct / instant_through:.2f}x"))
    record(figures)
    rows.append((f"gateway req/s, upstream {args.upstream_ms:g} ms", f"{1000 / through:10.0f}",
                 f"{1000 / direct:10.0f}", f"{direct / through:.2f}x", ">= 0.7x", direct / through >= 0.7))
    info = (("gateway req/s, instant upstream", f"{1000 / instant_through:10.0f}", f"{1000 / instant_direct:10.0f}",
             f"{instant_direct / instant_through:.2f}x", "(information)", True))
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average: {load}; sandbox tool: {find_tool().name} {find_tool().version}; "
          f"probe (once per run, included above): {probe * 1e3:.1f} ms")
    print(f"{'figure':34} {'measured':>14} {'baseline':>14} {'ratio':>9}  target")
    for name, ours, base, ratio, target, met in rows:
        print(f"{name:34} {ours:>14} {base:>14} {ratio:>9}  {target} {'met' if met else 'MISSED'}")
    print(f"{info[0]:34} {info[1]:>14} {info[2]:>14} {info[3]:>9}  {info[4]}")
    return 1 if args.check and not all(row[-1] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
