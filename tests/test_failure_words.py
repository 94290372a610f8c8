"""A method's failure is worded the same by both hosts, whichever runtime the method is written for: the Python
host (``mt-eval translate``: in this process, or a Node guest) and the Node host (``startGuest``: a Python guest
from ``mt-eval serve``, or a Node guest) give each entry the same error."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

PYTHON_METHOD = """
import os, sys

class M:
    async def translate(self, entries, config):
        sources = [e["source"] for e in entries]
        if "RAISE" in sources:
            raise ValueError("asked to raise")
        if "CRASH" in sources:
            sys.stderr.write("dying now\\n")
            sys.stderr.flush()
            os.kill(os.getpid(), 9)
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries if e["source"] != "DROP"]
"""
NODE_METHOD = """
export async function translate(entries) {
  const sources = entries.map((e) => e.source);
  if (sources.includes('RAISE')) throw new ValueError('asked to raise');
  if (sources.includes('CRASH')) { process.stderr.write('dying now\\n'); process.kill(process.pid, 'SIGKILL'); }
  return entries.filter((e) => e.source !== 'DROP').map((e) => ({ id: e.id, predicted: 'x' + e.source }));
}
class ValueError extends Error { name = 'ValueError'; }
"""
NODE_HOST = """
const [, , kit, ...command] = process.argv;
const { startGuest } = await import(kit);
const guest = await startGuest(command, { config: { source_lang: 'eng', target_lang: 'spa' }, logger: {} });
const sources = ['Hi', 'RAISE', 'DROP', 'CRASH', 'Bye'];
const results = await guest.translate(sources.map((source, i) => ({ id: String(i), source })));
await guest.close();
process.stdout.write(results.map((r) => r.predicted ?? `[error] ${r.error}`).join('\\n') + '\\n');
"""
SOURCES = ["Hi", "RAISE", "DROP", "CRASH", "Bye"]
EXPECTED = ["xHi", "[error] the method failed: ValueError: asked to raise",
            "[error] the method returned no result for this entry",
            "[error] the guest was killed by SIGKILL | stderr: dying now", "xBye"]


def plugin(root: Path, runtime: str) -> Path:
    directory = root / runtime
    directory.mkdir()
    entry = {"entry_point": "pipeline:M"} if runtime == "python" else {"node_entry": "translate.js"}
    (directory / "method.json").write_text(json.dumps({"name": "Words", "method_id": "words", **entry,
                                                       "supported_pairs": ["eng>spa"], "dependencies": []}))
    (directory / ("pipeline.py" if runtime == "python" else "translate.js")).write_text(
        PYTHON_METHOD if runtime == "python" else NODE_METHOD)
    return directory


def python_host(method: Path, sources: list[str] = SOURCES) -> list[str]:
    """What ``mt-eval translate`` prints for each sentence, translated alone: a command given several sends them in
    calls at once, and a guest's stderr, shared by its calls, would then give the crash the words of another."""
    said = []
    for source in sources:
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(method), source],
                              capture_output=True, text=True, timeout=120)
        said += done.stdout.splitlines()
    return said


def node_host(method: Path, tmp_path: Path) -> list[str]:
    script = tmp_path / "host.mjs"
    script.write_text(NODE_HOST)
    if (method / "pipeline.py").exists():
        command = [sys.executable, "-m", "mt_eval.cli", "serve", str(method)]
    else:
        command = [NODE or "node", str(REPO / "bridge" / "node" / "bin" / "mt-eval-guest.js"), str(method)]
    done = subprocess.run([NODE or "node", str(script), (REPO / "bridge" / "node" / "index.js").as_uri(), *command],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_python_host_in_process_and_the_node_host_with_a_python_guest_say_the_same(tmp_path: Path):
    method = plugin(tmp_path, "python")
    # (a method that kills its own process kills the command's in process: there, only the Node host sees a crash)
    assert python_host(method, SOURCES[:3]) == EXPECTED[:3]
    assert node_host(method, tmp_path) == EXPECTED


def test_both_hosts_say_the_same_of_a_node_guest(tmp_path: Path):
    method = plugin(tmp_path, "node")
    assert python_host(method) == node_host(method, tmp_path) == EXPECTED


SLOW = {"python": "import asyncio\n\nclass M:\n    async def translate(self, entries, config):\n"
                  "        await asyncio.sleep(30)\n        return []\n",
        "node": "export async function translate() { await new Promise((r) => setTimeout(r, 30000)); return []; }\n"}


@pytest.mark.parametrize("runtime", ["python", "node"])
async def test_calls_running_when_the_python_host_closes_a_guest_fail_as_closed_and_are_not_sent_again(
        tmp_path: Path, runtime: str, caplog):
    """As the Node host says it: a Python guest cancels them as its input ends, a Node guest still busy is stopped
    with SIGTERM; either way each entry says the guest was closed, and no guest is started again to retry them."""
    import asyncio
    import time

    from mt_eval.bridge.connection import HostOptions
    from mt_eval.bridge.method import BridgeMethod
    from mt_eval.loader import load_method

    directory = plugin(tmp_path, runtime)
    (directory / ("pipeline.py" if runtime == "python" else "translate.js")).write_text(SLOW[runtime])
    command = [sys.executable, "-m", "mt_eval.cli", "serve", str(directory)] if runtime == "python" else \
        load_method(directory).method.command  # (the Node guest as the SDK starts it)
    method = BridgeMethod(command, label="slow", options=HostOptions(shutdown_grace_s=0.5))
    running = asyncio.ensure_future(method.translate([{"id": str(i), "source": "Hi"} for i in range(3)], CONFIG))
    await method.start(CONFIG)
    await asyncio.sleep(0.5)  # (the request is on the wire)
    began = time.monotonic()
    await method.aclose()
    results = await asyncio.wait_for(running, 10)
    assert [r["error"] for r in results] == ["the guest was closed"] * 3
    assert time.monotonic() - began < 5 and "restarting guest" not in caplog.text
    assert not method._connection.alive


CONFIG = {"source_lang": "eng", "target_lang": "spa"}
