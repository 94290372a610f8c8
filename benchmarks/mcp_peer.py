"""The bridge's public path against the Model Context Protocol SDKs, measured side by side in one run.

Peer: the MCP Python SDK (``mcp``) as the client of a Node MCP server built with ``@modelcontextprotocol/sdk``
(``benchmarks/mcp_echo_server.mjs``) whose ``translate`` tool echoes each entry, as the bridge benchmark's Node
method does. Ours: ``load_method(plugin).method.translate`` on that Node method. Both make one-entry calls with
64 in flight (64 workers, each awaiting its calls in turn), every reply decoded; they alternate in rounds and
each figure is the median over rounds. Target: ours ≥ 10× the MCP SDKs.

Run: ``nox -s mcp`` (installs both SDKs), or ``python benchmarks/mcp_peer.py --mcp-prefix DIR`` where
``npm install --prefix DIR @modelcontextprotocol/sdk zod`` was done and ``mcp`` is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bridge import CONFIG, NODE, concurrently, make_plugins, one_entry_calls, round_trips
from report import at_least, ratio_figure, report

from mt_eval.loader import load_method


async def samples(plugin: Path, server: Path, rounds: int, calls: int) -> dict[str, list[float]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    method: Any = load_method(plugin).method
    await method.start(CONFIG)
    found: dict[str, list[float]] = {"ours": [], "mcp": [], "ours rtt": [], "mcp rtt": []}
    try:
        async with stdio_client(StdioServerParameters(command=NODE, args=[str(server)], cwd=str(server.parent))) as (
                read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def peer(entries: list[dict[str, str]]) -> Any:
                answer = await session.call_tool("translate", {"entries": entries})
                return json.loads(answer.content[0].text)  # type: ignore[union-attr]

            async def ours(entries: list[dict[str, str]]) -> Any:
                return await method.translate(entries, CONFIG)

            one_entry = one_entry_calls(calls)
            await concurrently(peer, one_entry[:500])  # warm up both
            await concurrently(ours, one_entry[:500])
            assert await peer(one_entry[0]) == [{"id": "0", "predicted": one_entry[0][0]["source"]}]
            for _ in range(rounds):
                found["mcp"].append(await concurrently(peer, one_entry))
                found["ours"].append(await concurrently(ours, one_entry))
                found["mcp rtt"].extend(await round_trips(peer, one_entry[:200]))
                found["ours rtt"].extend(await round_trips(ours, one_entry[:200]))
    finally:
        await method.aclose()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mcp-prefix", type=Path, required=True,
                        help="where `npm install @modelcontextprotocol/sdk zod` was done")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3000, help="one-entry calls per side per round")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    args.mcp_prefix = args.mcp_prefix.resolve()
    if not (args.mcp_prefix / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        sys.exit(f"{args.mcp_prefix}: no node_modules/@modelcontextprotocol/sdk; run `npm install --prefix "
                 f"{args.mcp_prefix} @modelcontextprotocol/sdk zod` first (or use `nox -s mcp`)")
    server = args.mcp_prefix / "mcp_echo_server.mjs"
    shutil.copy(Path(__file__).with_name("mcp_echo_server.mjs"), server)
    with tempfile.TemporaryDirectory() as scratch:
        _echo, plugin, _python = make_plugins(Path(scratch))
        started = time.perf_counter()
        found = asyncio.run(samples(plugin, server, args.rounds, args.calls))
    m = {key: statistics.median(values) for key, values in found.items()}
    figures = [
        ratio_figure("mcp", "public path vs MCP SDKs: 64 in flight", m["ours"], m["mcp"], "req/s", at_least(10),
                     digits=0, peer=f"MCP {m['mcp']:,.0f} req/s",
                     note=f"sequential p50: ours {m['ours rtt'] * 1e6:.0f} µs, MCP {m['mcp rtt'] * 1e6:.0f} µs; "
                          f"{args.rounds} alternating rounds of {args.calls:,} calls per side"),
    ]
    print(f"Python host → Node method, one-entry calls ({time.perf_counter() - started:.0f} s)")
    missed = report(figures)
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
