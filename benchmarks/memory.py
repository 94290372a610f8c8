"""Memory and time of ``mt-eval run`` at 100,000 and 1,000,000 entries, the whole process tree measured.

A trivial method (it copies its source) runs over generated corpora with every metric and its 95% interval
(3 metrics × 1,000 resamples), as ``benchmarks/harness.py`` runs it, with default settings but batches of 64.
While a run lasts, the proportional set size (PSS, from ``/proc/PID/smaps_rollup``) of the command and every
process under it — forked scorers included — is summed every 50 ms; the figure is the peak of that sum. PSS
shares a page among the processes mapping it, so a forked child counts only what it made its own.

Targets: the 1,000,000-entry run's peak under 400 MiB; its wall time ≤ 11× the 100,000-entry run's (measured
in the same invocation, one run each: a million entries take minutes). ``--quick`` runs 100,000 only.

Run: ``python benchmarks/memory.py [--quick] [--entries N ...]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness import TRIVIAL, make_corpus, make_plugin
from report import Figure, at_most, below, report

SAMPLE_S = 0.05


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants, whichever thread forked them (a process pool forks from its own thread)."""
    found, waiting = [], [pid]
    while waiting:
        current = waiting.pop()
        found.append(current)
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                waiting += [int(child) for child in children.read_text().split()]
            except OSError:
                continue
    return found


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class PeakSampler:
    """The peak of the summed PSS of a process and its descendants, sampled in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_kib = 0
        self.processes = 0
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._done = threading.Event()
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            tree = process_tree(self.pid)
            total = sum(pss_kib(pid) for pid in tree)
            if total > self.peak_kib:
                self.peak_kib, self.processes = total, len(tree)
            self._done.wait(SAMPLE_S)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def measured_run(plugin: Path, corpus: Path, out: Path) -> tuple[float, float]:
    """Wall seconds and peak PSS (MiB) of ``mt-eval run`` over ``corpus``."""
    policy = corpus.parent / "no-families-policy.json"
    policy.write_text(json.dumps({"min_canaries": 0, "min_negatives": 0, "min_scored": 1}))
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(plugin), "--corpus", str(corpus),
               "--pair", "eng>spa", "--out", str(out), "--quiet", "--force", "--policy", str(policy),
               "--batch-size", "64"]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    sampler = PeakSampler(process.pid)
    code = process.wait()
    wall = time.perf_counter() - started
    sampler.stop()
    if code != 0:
        sys.exit(f"mt-eval run over {corpus.name} exited with {code}")
    return wall, sampler.peak_kib / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the 100,000-entry run only")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    print("mt-eval run, trivial method, 3 metrics with 1,000-resample intervals, batches of 64")
    with tempfile.TemporaryDirectory() as scratch:
        plugin = make_plugin(Path(scratch), "trivial", TRIVIAL, "Copy")
        root = Path(scratch)
        small_wall, small_peak = measured_run(plugin, make_corpus(root, 100_000), root / "run-100k")
        figures = [Figure("memory", "100,000 entries: peak PSS, process tree", ours=f"{small_peak:,.0f} MiB",
                          value=small_peak, unit=" MiB", note=f"wall {small_wall:.1f} s")]
        if not args.quick:
            big_wall, big_peak = measured_run(plugin, make_corpus(root, 1_000_000), root / "run-1m")
            card = json.loads((root / "run-1m" / "card.json").read_text())
            holds = ("its results" if card.get("results_log") is None
                     else f"a reference to results.jsonl ({card['results_log']['results']:,} results)")
            figures += [
                Figure("memory", "1,000,000 entries: peak PSS, process tree", ours=f"{big_peak:,.0f} MiB",
                       value=big_peak, target=below(400, " MiB"), note=f"the card holds {holds}"),
                Figure("memory", "1,000,000 entries: wall vs 100,000", ours=f"{big_wall:.1f} s",
                       baseline=f"{small_wall:.1f} s", value=big_wall / small_wall, target=at_most(11)),
            ]
    missed = report(figures)
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
