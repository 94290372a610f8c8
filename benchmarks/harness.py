"""Harness performance, every figure measured in this run.

1. ``mt-eval run`` of a trivial method on 1,000 entries with 95% intervals (3 metrics × 1,000 resamples),
   whole command wall time. Target ≤ 2 s. Baseline in the same run: the naive way the upstream harness
   computes intervals — re-running sacrebleu's ``corpus_score`` for every resample — timed on 20
   resamples of each metric and scaled to 1,000 (upstream's published figure: 185 s).
2. A method sleeping 50 ms per entry, 1,000 entries at concurrency 64, batch size 1: execution time
   against the ideal 1,000 × 50 ms / 64 = 0.78 s, on the loop ``mt-eval run`` runs methods on. Target ≤ 1.2× the
   ideal.

Run: ``python benchmarks/harness.py``. Memory and time at 100,000 and 1,000,000 entries: ``benchmarks/memory.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Figure, at_most, ratio_figure, report

from mt_eval import event_loop

TRIVIAL = '''
class Copy:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]
'''
SLEEPY = '''
import asyncio


class Sleepy:
    async def translate(self, entries, config):
        await asyncio.sleep(0.05 * len(entries))
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]
'''
WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "with", "house", "big", "small", "red", "blue", "green",
         "river", "city", "street", "night", "morning", "friend", "book", "school", "teacher", "water", "bread"]


def make_plugin(root: Path, name: str, code: str, cls: str) -> Path:
    plugin = root / name
    plugin.mkdir()
    (plugin / "pipeline.py").write_text(code)
    (plugin / "method.json").write_text(json.dumps({"name": name, "entry_point": f"pipeline:{cls}",
                                                    "dependency_class": "S", "dependencies": []}))
    return plugin


def make_corpus(root: Path, entries: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    rows = []
    for i in range(entries):
        reference = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 16)))
        source = " ".join(w if rng.random() < 0.8 else rng.choice(WORDS) for w in reference.split())
        rows.append(json.dumps({"id": str(i), "source": source, "reference": reference}))
    path = root / f"corpus-{entries}.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


def timed_run(plugin: Path, corpus: Path, out: Path, *extra: str) -> float:
    """Whole-command wall time of ``mt-eval run`` (its latency calls included), under a gate policy that asks
    nothing of these corpora without canaries or negative controls."""
    policy = corpus.parent / "no-families-policy.json"
    policy.write_text(json.dumps({"min_canaries": 0, "min_negatives": 0, "min_scored": 1}))
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(plugin), "--corpus", str(corpus),
               "--pair", "eng>spa", "--out", str(out), "--quiet", "--force", "--policy", str(policy), *extra]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def naive_interval_seconds(corpus: Path, resamples: int = 20) -> float:
    """Seconds the per-resample re-scoring approach needs for 1,000 resamples of each of the 3 metrics,
    extrapolated from ``resamples`` timed resamples per metric."""
    from mt_eval.harness.scoring import make_metrics

    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    hyps, refs = [r["source"] for r in rows], [r["reference"] for r in rows]
    rng = random.Random(0)
    total = 0.0
    for metric in make_metrics().values():
        started = time.perf_counter()
        for _ in range(resamples):
            idx = [rng.randrange(len(rows)) for _ in rows]
            metric.corpus_score([hyps[i] for i in idx], [[refs[i] for i in idx]])
        total += (time.perf_counter() - started) / resamples * 1000
    return total


def sleepy_execution(plugin: Path) -> float:
    """Seconds `execute` takes over 1,000 entries of the sleeping method, on the loop ``mt-eval run`` runs methods on
    (`mt_eval.event_loop`: uvloop where installed)."""
    from mt_eval.harness.execution import ResultsLog, RunSettings, execute
    from mt_eval.loader import load_method
    from mt_eval.records import RunConfig

    method = load_method(plugin).method
    entries = [{"id": str(i), "source": "x"} for i in range(1000)]
    settings = RunSettings(batch_size=1, concurrency=64, timeout_s=10)
    config = RunConfig(source_lang="eng", target_lang="spa")
    with tempfile.TemporaryDirectory() as scratch:
        log = ResultsLog(Path(scratch) / "results.jsonl")
        started = time.perf_counter()
        event_loop.run(execute, method, entries, config, settings, log, lambda result: None)
        elapsed = time.perf_counter() - started
        log.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="(accepted for nox -s benchmarks; nothing is skipped)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        trivial = make_plugin(root, "trivial", TRIVIAL, "Copy")
        sleepy = make_plugin(root, "sleepy", SLEEPY, "Sleepy")
        thousand = make_corpus(root, 1000)
        timed_run(trivial, thousand, root / "warm")  # warm the file cache
        runs = sorted(timed_run(trivial, thousand, root / f"run{i}") for i in range(3))
        ours = runs[1]
        naive = naive_interval_seconds(thousand)
        sleepy_s = sorted(sleepy_execution(sleepy) for _ in range(3))[1]
    ideal = 1000 * 0.05 / 64
    loop = "uvloop" if event_loop.use_uvloop() else "asyncio's loop"
    figures = [
        Figure("harness", "mt-eval run, 1,000 entries, with intervals", ours=f"{ours:.2f} s", value=ours,
               target=at_most(2, " s"), baseline=f"{naive:.1f} s naive",
               note=f"median of 3; the naive per-resample intervals (20 resamples per metric timed, scaled to "
                    f"1,000) take {naive / ours:,.0f}x as long"),
        ratio_figure("harness", "50 ms/entry, 1,000 entries, 64 in flight", sleepy_s, ideal, "s", at_most(1.2),
                     digits=2, note=f"median of 3, on {loop} (as mt-eval run); baseline: the ideal 1,000 × 50 ms / 64"),
    ]
    print("mt-eval run of a trivial method (the 100,000- and 1,000,000-entry runs: benchmarks/memory.py)")
    missed = report(figures)
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
