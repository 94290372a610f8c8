"""Bridge performance, both directions, against bare pipes measured in the same run.

Baselines (no host, no guest runner, no asyncio):

- Python → Node: Python writes msgspec-encoded JSON-RPC lines straight into a minimal Node echo process with
  blocking reads and writes. "pipelined": every request written at once by a thread, replies counted as
  lines; "64 in flight": at most 64 requests outstanding, each reply decoded with msgspec — what a
  hand-written client keeping 64 in flight does.
- Node → Python: Node writes JSON lines into a minimal Python echo (msgspec decode and encode, blocking
  reads and writes) and waits for each reply (``benchmarks/bridge_node_host.mjs``).

Figures and targets:

- the connection (`GuestConnection`, Python host → Node guest): sequential p50 of a 1-entry translate request
  (≤ 120 µs); 64 requests in flight as a share of the pipelined baseline (≥ 0.25×); entries/s in batches of
  100 as a share of the baseline echoing the same batches (≥ 0.5×); guest spawn → initialize answered,
  against ``node -e 0`` (≤ 1.3×);
- the public path (``load_method(dir).method.translate``, what the harness and users call), one-entry calls:
  64 in flight against the 64-in-flight baseline (≥ 0.3×); sequential p50 against the bare pipe's p50
  (≤ 1.3×), Python host → Node method and Node host (``startGuest``) → Python method (``mt-eval serve``).

The Python host's figures are measured on the loop mt-eval runs methods on (`mt_eval.event_loop`: uvloop where
installed), then again on asyncio's own loop, which a caller's ``asyncio.run`` gives, shown beside them; a Python
guest (``mt-eval serve``) runs on the same choice of loop.

Each round measures every side once, alternating; each figure is the median over rounds. Sequential round trips
are timed after `WARM_UP` calls a side, and the p50 over a fresh pair's first `FIRST` calls is shown beside them.
They are timed with every process of both pairs on one CPU (`one_cpu`: unpinned, where the scheduler happened to
place each pair decided the figure); the figures with many requests in flight use every CPU.
Run: ``python benchmarks/bridge.py`` (``--quick`` for a short run, ``--check`` to exit 1 on a miss).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
from one_cpu import one_cpu
from report import Figure, at_least, at_most, ratio_figure, report

from mt_eval import event_loop
from mt_eval.bridge.connection import GuestConnection
from mt_eval.bridge.runtimes import node_command
from mt_eval.loader import load_method

ROOT = Path(__file__).resolve().parent.parent
NODE = os.environ.get("MT_EVAL_NODE") or "node"
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
IN_FLIGHT = 64
# Sequential calls each side makes before its round trips are timed (the same for every side). A Node process runs
# its code slower over its first few thousand calls, while V8 compiles the hot functions again, optimised, on a
# thread of its own that shares the one CPU (`one_cpu`): after 200 calls the guest's p50 was still ~1.5 times its
# steady one and the bare echo's ~1.2 times, so that a figure measured the warming-up more than either side.
WARM_UP = 3000
FIRST = 1000  # the first calls of a fresh pair, whose p50 is shown beside the steady one
NODE_ECHO = r"""
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let out = '';
  let newline;
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const request = JSON.parse(buffer.slice(0, newline));
    buffer = buffer.slice(newline + 1);
    const results = request.params.entries.map((e) => ({ id: e.id, predicted: e.source }));
    out += JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { results } }) + '\n';
  }
  if (out) process.stdout.write(out);
});
"""
ECHO_METHOD = """
export async function translate(entries) {
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
"""
PYTHON_ECHO_METHOD = '''
class Echo:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]
'''
encode = msgspec.json.Encoder().encode
decode = msgspec.json.Decoder().decode


def request(request_id: int, size: int) -> bytes:
    entries = [{"id": f"{request_id}-{i}", "source": f"Sentence number {i} to translate."} for i in range(size)]
    return encode({"jsonrpc": "2.0", "id": request_id, "method": "translate",
                   "params": {"entries": entries, "config": CONFIG}}) + b"\n"


def one_entry_calls(count: int) -> list[list[dict[str, str]]]:
    return [[{"id": str(i), "source": f"Sentence number {i} to translate."}] for i in range(count)]


class BarePipe:
    """The baseline: a Node echo process driven with blocking reads and writes."""

    def __init__(self, script: Path) -> None:
        self.process = subprocess.Popen([NODE, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout

    def read_lines(self, count: int) -> None:
        seen = 0
        while seen < count:
            chunk = os.read(self.stdout.fileno(), 1 << 20)
            seen += chunk.count(b"\n")

    def round_trips(self, count: int) -> list[float]:
        times = []
        for i in range(count):
            line = request(i, 1)
            started = time.perf_counter()
            self.stdin.write(line)
            self.read_lines(1)
            times.append(time.perf_counter() - started)
        return times

    def pipelined(self, lines: list[bytes]) -> float:
        started = time.perf_counter()
        writer = threading.Thread(target=lambda: [self.stdin.write(line) for line in lines])
        writer.start()
        self.read_lines(len(lines))
        writer.join()
        return time.perf_counter() - started

    def in_flight(self, lines: list[bytes], window: int = IN_FLIGHT) -> float:
        """Seconds for ``lines`` with at most ``window`` outstanding, every reply decoded."""
        started = time.perf_counter()
        stdin, stdout = self.stdin.fileno(), self.stdout.fileno()
        sent = min(window, len(lines))
        os.write(stdin, b"".join(lines[:sent]))
        answered, rest = 0, b""
        while answered < len(lines):
            replies = (rest + os.read(stdout, 1 << 20)).split(b"\n")
            rest = replies.pop()
            for reply in replies:
                decode(reply)
            answered += len(replies)
            more = min(len(replies), len(lines) - sent)
            if more:
                os.write(stdin, b"".join(lines[sent:sent + more]))
                sent += more
        return time.perf_counter() - started

    def close(self) -> None:
        self.stdin.close()
        self.process.wait()


async def concurrently(call: Any, calls: list[Any]) -> float:
    """Calls per second when ``calls`` are made by 64 workers, each awaiting its calls one after another."""
    async def worker(share: list[Any]) -> None:
        for argument in share:
            await call(argument)

    started = time.perf_counter()
    await asyncio.gather(*(worker(calls[k::IN_FLIGHT]) for k in range(IN_FLIGHT)))
    return len(calls) / (time.perf_counter() - started)


async def round_trips(call: Any, calls: list[Any]) -> list[float]:
    times = []
    for argument in calls:
        started = time.perf_counter()
        await call(argument)
        times.append(time.perf_counter() - started)
    return times


async def python_host_samples(echo: Path, plugin: Path, blocks: int, calls: int, flight: int, batches: int
                              ) -> dict[str, list[float]]:
    """Every Python-host figure, in alternating blocks: the bare pipe, `GuestConnection` (the wire and the guest
    runner, nothing above them) and the public path (``load_method(plugin).method.translate``) are all running,
    and each block measures each of them once, so a burst of load on the machine shifts them all."""
    pipe = BarePipe(echo)
    connection = GuestConnection(node_command(plugin), label="echo")
    method: Any = load_method(plugin).method
    await connection.start(CONFIG)
    await method.start(CONFIG)

    async def wire(entries: list[dict[str, str]]) -> Any:
        return await connection.request("translate", {"entries": entries, "config": CONFIG})

    async def public(entries: list[dict[str, str]]) -> Any:
        return await method.translate(entries, CONFIG)

    one_entry = one_entry_calls(max(calls, flight))
    hundred = [decode(request(i, 100))["params"]["entries"] for i in range(batches)]
    samples: dict[str, list[float]] = {}

    def add(key: str, values: float | list[float]) -> None:
        samples.setdefault(key, []).extend(values if isinstance(values, list) else [values])

    try:
        with one_cpu():  # every process of both pairs on one CPU while round trips are timed (one_cpu.py)
            add("pipe rtt first", pipe.round_trips(WARM_UP)[:FIRST])
            await round_trips(wire, one_entry[:WARM_UP])
            add("public rtt first", (await round_trips(public, one_entry[:WARM_UP]))[:FIRST])
            for _ in range(blocks * 2):
                add("pipe rtt", pipe.round_trips(calls))
                add("connection rtt", await round_trips(wire, one_entry[:calls]))
                add("public rtt", await round_trips(public, one_entry[:calls]))
        for _ in range(blocks):
            add("pipe pipelined", flight / pipe.pipelined([request(i, 1) for i in range(flight)]))
            add("pipe in flight", flight / pipe.in_flight([request(i, 1) for i in range(flight)]))
            add("connection in flight", await concurrently(wire, one_entry[:flight]))
            add("public in flight", await concurrently(public, one_entry[:flight]))
            add("pipe batched", batches * 100 / pipe.pipelined([request(i, 100) for i in range(batches)]))
            add("connection batched", batches * 100 / (batches / await concurrently(wire, hundred)))
    finally:
        pipe.close()
        await connection.aclose()
        await method.aclose()
    return samples


def node_host_samples(plugin: Path, blocks: int, calls: int) -> dict[str, list[float]]:
    """Node host → Python guest against Node ↔ a bare Python echo, in alternating blocks (``bridge_node_host.mjs``)."""
    script = Path(__file__).with_name("bridge_node_host.mjs")
    with one_cpu():  # it times round trips only: Node and both Python processes on one CPU (one_cpu.py)
        done = subprocess.run([NODE, str(script), "--python", sys.executable, "--plugin", str(plugin), "--blocks",
                               str(blocks), "--calls", str(calls)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def spawn_figures(plugin: Path, runs: int) -> dict[str, float]:
    """Median seconds from spawn to initialize answered: the guest as the SDK starts it (it names the checked
    plugin's module), as ``mt-eval-guest DIR`` starts it (checking the plugin's files), and ``node -e 0``."""
    commands = {"sdk": load_method(plugin).method.command, "directory": node_command(plugin)}

    async def ready(command: list[str]) -> float:
        started = time.perf_counter()
        connection = GuestConnection(command)
        await connection.start(CONFIG)
        elapsed = time.perf_counter() - started
        await connection.aclose()
        return elapsed

    def node_zero() -> float:
        started = time.perf_counter()
        subprocess.run([NODE, "-e", "0"], check=True)
        return time.perf_counter() - started

    times: dict[str, list[float]] = {"node": [], "sdk": [], "directory": []}
    for _ in range(runs):
        times["node"].append(node_zero())
        for name, command in commands.items():
            times[name].append(asyncio.run(ready(command)))
    return {name: statistics.median(values) for name, values in times.items()}


def first_calls(m: dict[str, float], side: str) -> str:
    """What the p50s are after the warm-up, and what they were over a fresh pair's first calls."""
    first, pipe = m[f"public rtt first{side}"], m[f"pipe rtt first{side}"]
    return (f"after {WARM_UP:,} warm-up calls a side; over the first {FIRST:,}: {first * 1e6:.1f} µs against "
            f"{pipe * 1e6:.1f} µs = {first / pipe:.2f}x")


def make_plugins(work: Path) -> tuple[Path, Path, Path]:
    echo = work / "echo.js"
    echo.write_text(NODE_ECHO)
    node_plugin = work / "echo-method"
    node_plugin.mkdir()
    (node_plugin / "translate.js").write_text(ECHO_METHOD)
    (node_plugin / "method.json").write_text('{"name": "Echo", "node_entry": "translate.js", "dependencies": []}')
    python_plugin = work / "echo-python"
    python_plugin.mkdir()
    (python_plugin / "pipeline.py").write_text(PYTHON_ECHO_METHOD)
    (python_plugin / "method.json").write_text('{"name": "Echo", "entry_point": "pipeline:Echo", "dependencies": []}')
    return echo, node_plugin, python_plugin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    blocks, calls, flight, batches, spawns = (5, 500, 5000, 150, 15) if args.quick else (9, 500, 8000, 300, 30)
    with tempfile.TemporaryDirectory() as scratch:
        echo, node_plugin, python_plugin = make_plugins(Path(scratch))
        with asyncio.Runner(loop_factory=event_loop.new_event_loop) as runner:  # the loop mt-eval runs methods on
            py = runner.run(python_host_samples(echo, node_plugin, blocks, calls, flight, batches))
        plain = asyncio.run(python_host_samples(echo, node_plugin, blocks, calls, flight, batches))
        node = node_host_samples(python_plugin, blocks * 2, calls) if shutil.which(NODE) else {}
        spawn = spawn_figures(node_plugin, spawns)
    m = {key: statistics.median(values) for key, values in {**py, **node}.items()}
    on_asyncio = {key: statistics.median(values) for key, values in plain.items()}
    loop_name = "uvloop" if event_loop.use_uvloop() else "asyncio's loop"
    asyncio_note = (f"on asyncio's own loop (a caller's asyncio.run): {on_asyncio['public rtt'] * 1e6:.1f} µs = "
                    f"{on_asyncio['public rtt'] / on_asyncio['pipe rtt']:.2f}x")

    name = "bridge"
    figures = [
        Figure(name, "connection: sequential p50", ours=f"{m['connection rtt'] * 1e6:.1f} µs",
               baseline=f"{m['pipe rtt'] * 1e6:.1f} µs", value=m["connection rtt"] * 1e6, target=at_most(120, "µs")),
        ratio_figure(name, "connection: 64 in flight", m["connection in flight"], m["pipe pipelined"], "req/s",
                     at_least(0.25), digits=0, note="baseline: pipelined (all written at once, replies counted)"),
        ratio_figure(name, "connection: batched (100/request)", m["connection batched"], m["pipe batched"],
                     "entries/s", at_least(0.5), digits=0),
        ratio_figure(name, "guest spawn → ready vs node -e 0", spawn["directory"], spawn["node"], "ms",
                     at_most(1.3), scale=1e3, note=f"mt-eval-guest DIR (the plugin's files checked by the guest); "
                     f"as the SDK starts it (--module, files checked by the host): {spawn['sdk'] * 1e3:.1f} ms = "
                     f"{spawn['sdk'] / spawn['node']:.2f}x"),
        ratio_figure(name, "public path: 64 in flight, 1-entry calls", m["public in flight"], m["pipe in flight"],
                     "req/s", at_least(0.3), digits=0,
                     note=f"baseline: 64 in flight, every reply decoded with msgspec; host on {loop_name}, the loop "
                     f"mt-eval runs methods on; on asyncio's own loop: "
                     f"{on_asyncio['public in flight'] / on_asyncio['pipe in flight']:.2f}x"),
        ratio_figure(name, "public path: sequential p50, Python → Node", m["public rtt"], m["pipe rtt"], "µs",
                     at_most(1.3), scale=1e6, note=f"host on {loop_name}; {asyncio_note}; {first_calls(m, '')}"),
    ]
    if node:
        figures.append(ratio_figure(name, "public path: sequential p50, Node → Python", m["public rtt node"],
                                    m["pipe rtt node"], "µs", at_most(1.3), scale=1e6,
                                    note="startGuest(mt-eval serve) vs Node ↔ a bare Python msgspec echo; "
                                    f"{first_calls(m, ' node')}"))
    print(f"medians over alternating blocks: {blocks * 2} of {calls:,} sequential calls, {blocks} of {flight:,} calls "
          f"with 64 in flight and {batches} requests of 100 entries, per side")
    missed = report(figures)
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
