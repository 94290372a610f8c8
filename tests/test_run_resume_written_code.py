"""A resume refused because the method's code changed names the files modified since the run started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from gate_policies import LENIENT

HERE = Path(__file__).parent
CACHING = '''
import json
from pathlib import Path

class Method:
    def __init__(self, directory):
        self.directory = Path(directory)

    async def translate(self, entries, config):
        with (self.directory / "cache.jsonl").open("a") as cache:
            cache.write("".join(json.dumps(e["id"]) + "\\n" for e in entries))
        return [{"id": e["id"], "predicted": e["source"][::-1]} for e in entries]
'''


def test_a_method_that_writes_in_its_own_directory_is_named_when_its_resume_is_refused(tmp_path: Path):
    """Before: "the method's code changed since the run started", though nobody had touched it: the method had
    written its cache beside its code, which the code hash covers, and the message said nothing of it."""
    plugin = tmp_path / "caching"
    plugin.mkdir()
    (plugin / "pipeline.py").write_text(CACHING)
    (plugin / "method.json").write_text(json.dumps({
        "name": "Caching", "method_id": "caching", "class": "pipeline", "version": "0.1.0",
        "entry_point": "pipeline:Method", "supported_pairs": ["eng>spa"], "dependency_class": "S",
        "dependencies": []}))
    past = time.time() - 60  # the plugin was written well before the run
    for name in ("pipeline.py", "method.json"):
        os.utime(plugin / name, (past, past))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": s[::-1]}) + "\n"
                              for i, s in enumerate(["one", "two", "three"])))
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(plugin), "--corpus", str(corpus),
               "--out", str(tmp_path / "run"), "--quiet", "--resamples", "100", *LENIENT, "--latency-sample", "0",
               "--no-contamination-check"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    log = tmp_path / "run" / "results.jsonl"  # as if it had been stopped after its first entry
    log.write_text(log.read_text().splitlines(keepends=True)[0])
    (tmp_path / "run" / "card.json").unlink()
    time.sleep(1.1)  # (the run's start is recorded to the second)
    os.utime(plugin / "cache.jsonl")
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 1
    said = resumed.stderr.strip()
    assert "the method's code changed since the run started" in said
    assert f"Modified in {plugin} since the run started: cache.jsonl; if the method wrote them" in said
    assert "pipeline.py" not in said and "method.json" not in said
    assert "have it write to a temporary directory instead" in said
