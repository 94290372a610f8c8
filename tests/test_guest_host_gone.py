"""A Python guest whose host was killed ends, even while its method blocks the event loop
(`mt_eval.bridge.host_gone`): it ran on with no parent, for as long as the method blocked."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from mt_eval.bridge.host_gone import ORPHAN_GRACE_S
from process_support import marked_environment, processes_marked

BLOCKING = """\
import time


class Blocking:
    async def translate(self, entries, config):
        time.sleep(600)  # blocks the event loop
        return []
"""

# The host: starts the guest, sends it a request, says so, and waits to be killed.
HOST = """\
import json, subprocess, sys, time
guest = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "serve", sys.argv[1]], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
config = {"source_lang": "eng", "target_lang": "spa"}
for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocol_versions": ["mt-eval-bridge/1"], "config": config}},
                {"jsonrpc": "2.0", "id": 2, "method": "translate",
                 "params": {"entries": [{"id": "a", "source": "x"}]}}):
    guest.stdin.write(json.dumps(message).encode() + b"\\n")
    guest.stdin.flush()
    if message["id"] == 1:
        guest.stdout.readline()  # initialized
print(guest.pid, flush=True)  # the translate now blocks the guest's loop
time.sleep(600)
"""


def test_a_guest_whose_host_was_killed_ends_while_its_method_blocks(tmp_path: Path):
    plugin = tmp_path / "blocking"
    plugin.mkdir()
    (plugin / "pipeline.py").write_text(BLOCKING)
    (plugin / "method.json").write_text(json.dumps({"name": "Blocking", "entry_point": "pipeline:Blocking",
                                                    "dependencies": []}))
    marker, env = marked_environment()
    host = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOST), str(plugin)], stdout=subprocess.PIPE,
                            env=env)
    try:
        assert host.stdout is not None
        guest = host.stdout.readline().decode().strip()
        assert guest.isdigit()
        time.sleep(0.5)
        host.send_signal(signal.SIGKILL)
        host.wait()
        gone = time.monotonic() + ORPHAN_GRACE_S + 10
        while processes_marked(marker) and time.monotonic() < gone:
            time.sleep(0.25)
        assert processes_marked(marker) == []  # the guest ended by itself
    finally:
        if host.stdout is not None:
            host.stdout.close()
        for pid in processes_marked(marker):
            subprocess.run(["kill", "-9", pid], check=False)


def test_a_guest_whose_stderr_went_with_its_host_still_ends():
    """A host that read the guest's stderr through a pipe takes that pipe with it: saying why it exits raised
    BrokenPipeError in the watching thread, which then never ended the guest (it ran on with no parent)."""
    import os

    code = "import time\nfrom mt_eval.bridge.host_gone import watch_host\nwatch_host(0, grace_s=0.3)\ntime.sleep(60)\n"
    stdin_read, stdin_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    guest = subprocess.Popen([sys.executable, "-c", code], stdin=stdin_read, stderr=stderr_write)
    os.close(stdin_read)
    os.close(stderr_write)
    try:
        time.sleep(1.0)  # (started, and watching)
        os.close(stderr_read)  # the host is gone: its end of the guest's stderr first, then of its stdin
        os.close(stdin_write)
        assert guest.wait(timeout=10) == 1
    finally:
        guest.kill()
        guest.wait()
