"""Corpus reading speed, every figure measured in this run.

``read_corpus`` (read, check every entry, doubt checks) on 100,000-entry corpora in four shapes, against a
baseline measured on the same bytes in the same run: the bare parse into entry dicts with the standard
library and no checks — ``json.loads`` per line for JSONL, ``str.split("\\t")`` into a dict per line for
TSV, a dict per pair of lines for parallel text. Target: the reader within 3x of the bare parse for every
shape (it also checks ids, sources and references, keeps line numbers and looks for doubtful shapes).

Run: ``python benchmarks/corpus.py`` (``--entries N`` for another size).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from report import at_most, ratio_figure, record

WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "with", "house", "big", "small", "red", "blue", "green",
         "river", "city", "street", "night", "morning", "friend", "book", "school", "teacher", "water", "bread"]
TARGET = 3.0


def sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 16))) + "." for _ in range(count)]


def write_corpora(root: Path, count: int) -> dict[str, Path]:
    sources, references = sentences(count, 1), sentences(count, 2)
    paths = {"jsonl": root / "dev.jsonl", "tsv": root / "dev.tsv", "tsv-header": root / "dev-header.tsv",
             "source": root / "dev.en", "reference": root / "dev.es"}
    paths["jsonl"].write_text("".join(json.dumps({"id": f"s{i}", "source": s, "reference": r}) + "\n"
                                      for i, (s, r) in enumerate(zip(sources, references, strict=True))))
    paths["tsv"].write_text("".join(f"{s}\t{r}\n" for s, r in zip(sources, references, strict=True)))
    paths["tsv-header"].write_text("id\tsource\treference\n" + "".join(
        f"s{i}\t{s}\t{r}\n" for i, (s, r) in enumerate(zip(sources, references, strict=True))))
    paths["source"].write_text("\n".join(sources) + "\n")
    paths["reference"].write_text("\n".join(references) + "\n")
    return paths


def median_seconds(work: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000, help="entries per corpus (default 100,000)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    from mt_eval.corpus import CorpusSpec, read_corpus

    with tempfile.TemporaryDirectory() as scratch:
        paths = write_corpora(Path(scratch), args.entries)

        def lines(path: Path) -> list[str]:
            return path.read_text(encoding="utf-8").splitlines()

        def tsv_dicts(path: Path, keys: tuple[str, ...], skip: int = 0) -> list[dict[str, str]]:
            return [{"id": str(n), **dict(zip(keys, line.split("\t"), strict=True))}
                    for n, line in enumerate(lines(path)[skip:], start=1 + skip)]

        def parallel_dicts() -> list[dict[str, str]]:
            pairs = zip(lines(paths["source"]), lines(paths["reference"]), strict=True)
            return [{"id": str(n), "source": s, "reference": r} for n, (s, r) in enumerate(pairs, start=1)]

        cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
            ("JSONL (id, source, reference)", lambda: read_corpus(paths["jsonl"]),
             lambda: [json.loads(line) for line in lines(paths["jsonl"])]),
            ("TSV source<TAB>reference", lambda: read_corpus(paths["tsv"]),
             lambda: tsv_dicts(paths["tsv"], ("source", "reference"))),
            ("TSV with an id<TAB>source<TAB>reference header", lambda: read_corpus(paths["tsv-header"]),
             lambda: tsv_dicts(paths["tsv-header"], ("id", "source", "reference"), skip=1)),
            ("parallel text, two files", lambda: read_corpus(CorpusSpec(source_file=paths["source"],
                                                                        reference_file=paths["reference"])),
             parallel_dicts),
        ]
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"corpus reading, {args.entries:,} entries, median of 5 (load average {load:.2f}):")
        missed = 0
        for label, ours, baseline in cases:
            ours(), baseline()  # warm the file cache
            reader, bare = median_seconds(ours), median_seconds(baseline)
            ratio = reader / bare
            print(f"  {label:<48} {reader:6.3f} s vs bare parse {bare:6.3f} s = {ratio:4.2f}x "
                  f"(target <= {TARGET:g}x: {'met' if ratio <= TARGET else 'MISSED'})")
            missed |= record([ratio_figure("corpus", f"reading: {label}", reader, bare, "s", at_most(TARGET),
                                            digits=3)])
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
