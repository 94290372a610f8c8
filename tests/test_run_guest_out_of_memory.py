"""A guest that runs out of memory fails the entry it was working on with the runtime's own words, not with the
native stack trace its runtime prints after them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mt_eval.child_stderr import last_lines
from test_run_method_faults import corpus, needs_node, node_plugin

ALLOCATES = """
exports.translate = async (entries) => {
  if (entries.some((e) => e.source === 'EXIT')) {
    const kept = [];
    for (;;) kept.push(new Array(1e6).fill(Math.random()));
  }
  return entries.map((e) => ({ id: e.id, predicted: 'x' + e.source }));
};
"""
OUT_OF_MEMORY = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"


@needs_node
def test_a_node_method_out_of_memory_fails_its_entry_saying_so(tmp_path: Path):
    """Before: the entry's error quoted the last five lines of V8's native stack trace (`16: 0x195e376  [node]`)."""
    method = node_plugin(tmp_path, ALLOCATES)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
                           str(corpus(tmp_path)), "--pair", "eng>spa", "--out", str(tmp_path / "run"),
                           "--latency-sample", "0", "--resamples", "100", "--retries", "0", "--quiet"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NODE_OPTIONS": "--max-old-space-size=32"})
    assert done.returncode == 3, done.stderr[-3000:]
    failure = [line for line in done.stderr.splitlines() if line.startswith("  1 × ")]
    said = f"  1 × the guest was killed by SIGABRT | stderr: {OUT_OF_MEMORY}  (e.g. e1)"
    assert failure == [said], done.stderr[-3000:]
    assert (tmp_path / "run" / "predictions.txt").read_text() == "xHi\n\nxBye\n"


def test_the_last_lines_of_a_stderr_are_its_last_five_or_a_fatal_error_of_v8_alone():
    assert last_lines("a\n\nb\nc\nd\ne\nf\n") == "b / c / d / e / f"
    assert last_lines(f"<--- JS stacktrace --->\n{OUT_OF_MEMORY}\n----- Native stack trace -----\n 1: 0xb78db3 node\n"
                      ) == OUT_OF_MEMORY
