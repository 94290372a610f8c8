"""A guest that starts a process outside its own process group (``setsid``: Node's ``detached``, Python's
``start_new_session``) does not leave it running when the host closes the guest: a signal to the guest's group
does not reach it, so the host ends it by name (read before the guest was stopped), and says so. (One that is no
longer the guest's descendant when the guest is closed — a daemon that forked twice — is beyond its reach.)"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
from pathlib import Path

import pytest

from mt_eval.bridge.connection import HostOptions
from mt_eval.bridge.method import BridgeMethod

NODE = shutil.which("node")
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
PYTHON_METHOD = """
import subprocess, sys

class M:
    async def translate(self, entries, config):
        helper = subprocess.Popen(["sleep", "300"], start_new_session=True)
        sys.stderr.write(f"helper pid {helper.pid}\\n")
        return [{"id": e["id"], "predicted": str(helper.pid)} for e in entries]
"""
NODE_METHOD = """
import { spawn } from 'node:child_process';
export async function translate(entries) {
  const helper = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  return entries.map((e) => ({ id: e.id, predicted: String(helper.pid) }));
}
"""


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def plugin(root: Path, runtime: str) -> list[str]:
    """The guest's command for a method that leaves a detached ``sleep 300`` behind."""
    directory = root / runtime
    directory.mkdir()
    entry = {"entry_point": "pipeline:M"} if runtime == "python" else {"node_entry": "translate.js"}
    (directory / "method.json").write_text(json.dumps({"name": "Strays", **entry, "dependencies": []}))
    (directory / ("pipeline.py" if runtime == "python" else "translate.js")).write_text(
        PYTHON_METHOD if runtime == "python" else NODE_METHOD)
    if runtime == "python":
        return [sys.executable, "-m", "mt_eval.cli", "serve", str(directory)]
    from mt_eval.loader import load_method

    return load_method(directory).method.command  # type: ignore[no-any-return]


@pytest.mark.parametrize("runtime", ["python", pytest.param("node", marks=pytest.mark.skipif(
    NODE is None, reason="node is not installed"))])
async def test_a_process_the_guest_started_outside_its_group_is_ended_with_it(tmp_path: Path, runtime: str, caplog):
    caplog.set_level(logging.WARNING)
    method = BridgeMethod(plugin(tmp_path, runtime), label="strays", options=HostOptions(shutdown_grace_s=1))
    [result] = await method.translate([{"id": "1", "source": "Hi"}], CONFIG)
    helper = int(result["predicted"])
    assert running(helper)
    try:
        await method.aclose()
        for _ in range(100):
            if not running(helper):
                break
            await asyncio.sleep(0.02)
        assert not running(helper), "the detached helper outlived the guest"
        if runtime == "node":  # (a Python guest ends its own children as it exits: `mt_eval.cli.leftovers`)
            assert f"strays left 1 process running outside its process group (pid {helper}: sleep 300): ended" \
                in caplog.text
    finally:
        if running(helper):
            import os
            import signal

            os.kill(helper, signal.SIGKILL)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
async def test_a_process_that_ends_with_the_guest_a_moment_after_it_is_not_called_left_behind(tmp_path: Path,
                                                                                             caplog):
    """As a sandbox's own process does (bubblewrap's, in a session of its own): it is not the method's stray."""
    caplog.set_level(logging.WARNING)
    guest = tmp_path / "guest.sh"  # its companion ends 0.1 s after the guest it watches is gone
    from mt_eval.bridge.runtimes import node_command

    reverse = node_command(Path(__file__).parent / "fixtures" / "reverse")  # (a Node guest leaves its children be)
    guest.write_text("#!/bin/sh\nwatched=$$\nsetsid sh -c \"while kill -0 $watched 2>/dev/null; do sleep 0.01; "
                     f"done; sleep 0.1\" </dev/null &\nexec {' '.join(reverse)}\n")
    guest.chmod(0o755)
    method = BridgeMethod([str(guest)], label="sandboxed", options=HostOptions(shutdown_grace_s=1))
    await method.translate([{"id": "1", "source": "Hi"}], CONFIG)
    await method.aclose()
    assert "left 1 process" not in caplog.text


DETACHING_PROGRAM = """
import subprocess, sys
for line in sys.stdin:
    if line.startswith("!exit"):
        sys.exit(3)
    if line.startswith("\u27e6"):  # (the adapter's markers pass through, as through a translator)
        print(line, end="", flush=True)
        continue
    helper = subprocess.Popen(["sleep", "300"], start_new_session=True)
    print(helper.pid, flush=True)
"""


async def test_a_process_detached_by_a_program_that_then_exits_on_its_own_is_ended_too(tmp_path: Path, caplog):
    """Before: it was looked for only when the program was closed — after it had exited, when the helper it detached
    was init's and no longer known as its own, so it ran on."""
    from mt_eval.adapters import LINES, ProcessOptions, ProcessTranslator

    caplog.set_level(logging.WARNING)
    script = tmp_path / "detaching.py"
    script.write_text(DETACHING_PROGRAM, encoding="utf-8")
    translator = ProcessTranslator([sys.executable, str(script)], framing=LINES,
                                   options=ProcessOptions(timeout_s=5, shutdown_grace_s=0.5))
    helper = 0
    try:
        [started] = await translator.translate_texts(["one"])
        helper = int(started.text or 0)
        assert running(helper)
        [ended] = await translator.translate_texts(["!exit"])
        assert ended.error is not None and "exited with code 3" in ended.error
        await translator.aclose()
        for _ in range(100):
            if not running(helper):
                break
            await asyncio.sleep(0.02)
        assert not running(helper), "the detached helper outlived the program that exited"
        assert f"left 1 process running outside its process group (pid {helper}: sleep 300): ended" in caplog.text
    finally:
        await translator.aclose()  # (ends the helpers of a test that failed before it closed the program)
        if helper and running(helper):
            import os
            import signal

            os.kill(helper, signal.SIGKILL)
