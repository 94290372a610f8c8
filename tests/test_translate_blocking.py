"""`mt-eval translate` with a method that blocks the event loop: --timeout, per sentence, still holds."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BLOCKS = '''
import time


class Blocks:
    async def translate(self, entries, config):
        time.sleep(60)  # (synchronous: the event loop stops with it)
        return [{"id": e["id"], "predicted": "hola"} for e in entries]
'''
MANIFEST = {"name": "Blocks", "entry_point": "pipeline:Blocks", "dependency_class": "S", "dependencies": [],
            "supported_pairs": ["eng>spa"]}


def test_a_sentence_whose_method_blocks_the_loop_fails_at_its_timeout_not_sixteen_times_later(make_plugin):
    plugin: Path = make_plugin(MANIFEST, {"pipeline.py": BLOCKS})
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", "--timeout", "1", str(plugin), "hello"],
                          capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    said = "[error] translate() blocked the event loop for 1.0 s (a synchronous call"
    assert done.stdout.startswith(said), done.stdout
    assert took < 8, took  # (it was --timeout times a whole batch, 16: a minute here, half an hour by default)
