"""The translator-program adapter against Apertium itself, every figure measured in this run.

Baseline: one ``apertium -u eng-spa`` call over 1,000 English sentences, one per line — the fastest way
to translate them with Apertium, and one process pipeline for everything.

Adapter: the same 1,000 sentences through the apertium-eng-spa example method (`mt_eval.adapters`), from
a cold start: the plugin is loaded (its method.json read) before the clock starts, but its programs start,
and at the end stop, inside the timed region:

- ``one call``: a single ``translate`` call with all 1,000 entries;
- ``harness``: the harness's execution engine as ``mt-eval run`` drives it (batches of 8, 8 in flight).

Both run on the loop mt-eval runs methods on (`mt_eval.event_loop`: uvloop where installed), as ``mt-eval run``
and ``mt-eval translate`` run them; the one call is also timed on asyncio's own loop (a caller's
``asyncio.run``), shown beside it.

Each is timed in alternating rounds (median reported). Target: the adapter ≤ 1.15× the baseline.
The adapter's predictions are each text translated on its own; ``--verify N`` checks N of them against
``apertium -u eng-spa`` run once per sentence (slow: about 0.25 s of CPU per call).

Sentences: the sentences of the licence texts in /usr/share/common-licenses (real prose, on every Debian
system), topped up with generated ones to 1,000. Run: ``python benchmarks/adapter.py [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from report import at_most, ratio_figure, report

from mt_eval import event_loop
from mt_eval.harness.execution import ResultsLog, RunSettings, execute
from mt_eval.loader import load_method
from mt_eval.records import RunConfig

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "apertium-eng-spa"
LICENCES = Path("/usr/share/common-licenses")
CONFIG = RunConfig(source_lang="eng", target_lang="spa", batch_size=8, concurrency=8)
SUBJECTS = ["The teacher", "My friend", "The old man", "A small dog", "The students", "Our neighbours", "She", "They"]
VERBS = ["reads", "wants", "sees", "buys", "finds", "likes", "writes", "opens"]
OBJECTS = ["a new book", "the red car", "the letter", "some bread", "the window", "a long story", "the door"]
PLACES = ["in the city", "at school", "at night", "in the morning", "near the river", "with care", "every day"]


def sentences(count: int) -> tuple[list[str], str]:
    found: list[str] = []
    for path in sorted(LICENCES.glob("*")) if LICENCES.is_dir() else []:
        try:
            text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        found += [s.strip() for s in re.split(r"(?<=[.;:!?])\s+", text) if 3 < len(s.strip()) < 400]
    found = list(dict.fromkeys(found))[:count]
    real = len(found)
    rng = random.Random(1)
    while len(found) < count:
        found.append(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(PLACES)}.")
    return found, f"{real} licence-text sentences, {count - real} generated"


def baseline(texts: list[str]) -> tuple[float, list[str]]:
    started = time.perf_counter()
    done = subprocess.run(["apertium", "-u", "eng-spa"], input="\n".join(texts).encode("utf-8") + b"\n",
                          capture_output=True, check=True)
    return time.perf_counter() - started, done.stdout.decode("utf-8").split("\n")


async def one_call(texts: list[str]) -> tuple[float, list[Any]]:
    method: Any = load_method(EXAMPLE).method
    started = time.perf_counter()
    try:
        results = await method.translate([{"id": str(i), "source": t} for i, t in enumerate(texts)], CONFIG)
    finally:
        await method.aclose()
    return time.perf_counter() - started, [r.get("predicted") for r in results]  # (an abstention has none)


async def through_harness(texts: list[str]) -> tuple[float, list[Any]]:
    entries = [{"id": str(i), "source": t} for i, t in enumerate(texts)]
    with tempfile.TemporaryDirectory() as scratch:
        log = ResultsLog(Path(scratch) / "results.jsonl")
        method: Any = load_method(EXAMPLE).method
        started = time.perf_counter()
        try:
            await execute(method, entries, CONFIG, RunSettings(batch_size=8, concurrency=8), log, lambda r: None)
        finally:
            await method.aclose()
            log.close()
        elapsed = time.perf_counter() - started
        found = ResultsLog.read(Path(scratch) / "results.jsonl")
    return elapsed, [found[str(i)].predicted for i in range(len(texts))]


def verify(texts: list[str], predictions: list[Any], count: int) -> int:
    sample = random.Random(2).sample(range(len(texts)), min(count, len(texts)))

    def alone(index: int) -> str:
        return subprocess.run(["apertium", "-u", "eng-spa"], input=texts[index].encode("utf-8"),
                              capture_output=True, check=True).stdout.decode("utf-8")

    with ThreadPoolExecutor(max_workers=4) as pool:
        references = list(pool.map(alone, sample))
    return sum(predictions[i] == reference for i, reference in zip(sample, references, strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--verify", type=int, default=0, metavar="N", help="check N predictions one by one")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    if shutil.which("apertium") is None:
        print("apertium is not installed (Debian: apt-get install apertium apertium-eng-spa): nothing to measure")
        return 0
    texts, origin = sentences(args.sentences)
    times: dict[str, list[float]] = {"baseline": [], "one call": [], "harness": [], "one call, asyncio": []}
    for _ in range(args.rounds):
        elapsed, lines = baseline(texts)
        times["baseline"].append(elapsed)
        with asyncio.Runner(loop_factory=event_loop.new_event_loop) as runner:  # the loop mt-eval runs methods on
            elapsed, predicted = runner.run(one_call(texts))
            times["one call"].append(elapsed)
            elapsed, through = runner.run(through_harness(texts))
            times["harness"].append(elapsed)
        elapsed, on_asyncio = asyncio.run(one_call(texts))
        times["one call, asyncio"].append(elapsed)
    if predicted != through or predicted != on_asyncio:
        differ = sum(a != b or a != c for a, b, c in zip(predicted, through, on_asyncio, strict=True))
        print(f"the ways of calling the method disagree on {differ} of {len(texts)} sentences: the tagger's state "
              "leaked from one record into another", file=sys.stderr)
        return 1
    print(f"sentences: {len(texts)} ({origin}); medians of {args.rounds} alternating rounds")
    same = sum(p == line for p, line in zip(predicted, lines, strict=False))
    base = statistics.median(times["baseline"])
    loop_name = "uvloop" if event_loop.use_uvloop() else "asyncio's loop"
    on_asyncio = statistics.median(times["one call, asyncio"])
    figures = [ratio_figure("adapter", f"Apertium adapter, {name}", statistics.median(times[name]), base, "s",
                            at_most(1.15), digits=3, note=note)
               for name, note in (("one call", f"one translate call with all the sentences, from a cold start, on "
                                               f"{loop_name}, the loop mt-eval runs methods on; on asyncio's own loop: "
                                               f"{on_asyncio:.3f} s = {on_asyncio / base:.2f}x"),
                                  ("harness", f"the harness's execution engine: batches of 8, 8 in flight, on "
                                              f"{loop_name}"))]
    missed = report(figures)
    print(f"baseline: one `apertium -u eng-spa` call over all of them; predictions equal to the baseline's line: "
          f"{same} of {len(texts)} (it translates the lines as one text; the method translates each text on its own)")
    if args.verify:
        matched = verify(texts, predicted, args.verify)
        print(f"  verified against `apertium -u eng-spa` run per sentence: {matched} of {min(args.verify, len(texts))}"
              " equal")
        return 0 if matched == min(args.verify, len(texts)) else 1
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
