"""Contamination check speed and memory, every figure measured in this run.

A synthetic 50 MB bundle (prompts, Markdown, JSON lines, a TSV glossary, Python and JavaScript sources,
a gzip-compressed data file) against a synthetic 100,000-entry corpus (200,000 texts). Both are drawn
from the same Zipf-distributed vocabulary and share 2,000 common phrases, so the bundle shares many
n-grams with the corpus without holding any of its texts: the bundle is clean, and the full check — the
scan, then the planted control's second scan of a copy — runs as it would for a real clean bundle.

* ``mt-eval contamination`` as a child process: wall time and its peak memory (target: under 60 s on
  two cores, memory bounded). The verdict and the control's recall are printed too.
* Baseline, in the same run: the straightforward all-pairs comparison — every bundle line against every
  corpus text, the text looked for as a substring of the normalised line and their 5-gram sets
  intersected — timed on a sample of pairs and scaled up to all of them.

Run: ``python benchmarks/contamination.py`` (``--size-mb`` and ``--entries`` scale it down for a quick look).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from report import Figure, below, record

from mt_eval.contamination.normalize import words

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "shi", "zu", "ben", "tor", "al", "ei"]


class Language:
    """A synthetic language: a Zipf-distributed vocabulary and common phrases."""

    def __init__(self, rng: np.random.Generator, size: int, phrases: int) -> None:
        spellings = set()
        while len(spellings) < size:
            spellings.add("".join(rng.choice(SYLLABLES, size=int(rng.integers(1, 5)))))
        self.vocabulary = rng.permutation(np.array(sorted(spellings)))
        weights = 1.0 / np.arange(1, size + 1) ** 0.9
        self.weights = weights / weights.sum()
        self.phrases = [" ".join(self.draw(rng, int(rng.integers(4, 9)))) for _ in range(phrases)]

    def draw(self, rng: np.random.Generator, count: int) -> list[str]:
        return list(self.vocabulary[rng.choice(len(self.vocabulary), size=count, p=self.weights)])

    def sentences(self, rng: np.random.Generator, count: int) -> list[str]:
        lengths = rng.integers(8, 31, size=count)
        flat = self.draw(rng, int(lengths.sum()))
        out, at = [], 0
        for length in lengths.tolist():
            words_ = flat[at:at + length]
            at += length
            if rng.random() < 0.5:  # a common phrase inside
                position = int(rng.integers(0, length))
                words_[position:position] = [self.phrases[int(rng.integers(len(self.phrases)))]]
            out.append(" ".join(words_).capitalize() + rng.choice([".", "!", "?", "."]))
        return out


def make_corpus(root: Path, entries: int, source: Language, target: Language, rng: np.random.Generator) -> Path:
    sources, references = source.sentences(rng, entries), target.sentences(rng, entries)
    path = root / "corpus.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(entries):
            out.write(json.dumps({"id": f"e{i}", "source": sources[i], "reference": references[i]},
                                 ensure_ascii=False) + "\n")
    return path


def make_bundle(root: Path, size_mb: float, source: Language, target: Language, rng: np.random.Generator
                ) -> tuple[Path, int]:
    """A clean bundle of about ``size_mb`` MB; returns it and its number of lines."""
    bundle = root / "bundle"
    (bundle / "data").mkdir(parents=True)
    target_bytes = size_mb * 1e6
    (bundle / "method.json").write_text(json.dumps({"name": "synthetic", "entry_point": "pipeline:Method",
                                                    "dependencies": []}))
    # shares of the bundle's size on disk (the gzip file holds about three times its size)
    share = {"prompts.txt": 0.2, "notes.md": 0.1, "data/pairs.jsonl": 0.25, "data/glossary.tsv": 0.1,
             "pipeline.py": 0.1, "translate.js": 0.1, "data/extra.jsonl.gz": 0.15 * 2.9}
    lines_total = 0
    for name, fraction in share.items():
        budget = int(target_bytes * fraction)
        lines: list[str] = []
        size = 0
        while size < budget:
            batch_src, batch_tgt = source.sentences(rng, 2000), target.sentences(rng, 2000)
            for s, t in zip(batch_src, batch_tgt, strict=True):
                if name.endswith((".jsonl", ".jsonl.gz")):
                    line = json.dumps({"src": s, "tgt": t}, ensure_ascii=False)
                elif name.endswith(".tsv"):
                    line = f"{s}\t{t}"
                elif name.endswith(".py"):
                    line = f"    ({s!r}, {t!r}),"
                elif name.endswith(".js"):
                    line = f"  [{json.dumps(s)}, {json.dumps(t)}],"
                else:
                    line = f"{s} {t}"
                lines.append(line)
                size += len(line.encode()) + 1
        lines_total += len(lines)
        if name.endswith(".py"):
            text = "EXAMPLES = [\n" + "\n".join(lines) + "\n]\n"
        elif name.endswith(".js"):
            text = "const examples = [\n" + "\n".join(lines) + "\n];\nmodule.exports = { examples };\n"
        else:
            text = "\n".join(lines) + "\n"
        path = bundle / name
        if name.endswith(".gz"):
            path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
        else:
            path.write_text(text, encoding="utf-8")
    return bundle, lines_total


def bundle_bytes(bundle: Path) -> int:
    return sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file())


def run_check(bundle: Path, corpus: Path) -> tuple[float, float, float, dict[str, object]]:
    """Wall seconds, CPU seconds, peak RSS (MiB) and the JSON report of ``mt-eval contamination`` as a child
    process."""
    command = [sys.executable, "-m", "mt_eval.cli", "contamination", "--method", str(bundle), "--corpus",
               str(corpus), "--json", "--quiet"]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, stdout=out)
        _pid, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        report = json.loads(out.read())
    if os.waitstatus_to_exitcode(status) not in (0, 1, 3):
        raise SystemExit(f"mt-eval contamination failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, report


def all_pairs_seconds(bundle_lines: list[str], corpus_texts: list[str], total_pairs: int, n: int = 5) -> float:
    """Seconds the all-pairs comparison would take for ``total_pairs``, from timing the given sample."""
    started = time.perf_counter()
    for line in bundle_lines:
        line_words = words(line)
        normalised = " ".join(line_words)
        line_grams = {tuple(line_words[i:i + n]) for i in range(len(line_words) - n + 1)}
        for text in corpus_texts:
            text_words = words(text)
            _found = " ".join(text_words) in normalised
            _shared = line_grams & {tuple(text_words[i:i + n]) for i in range(len(text_words) - n + 1)}
    per_pair = (time.perf_counter() - started) / (len(bundle_lines) * len(corpus_texts))
    return per_pair * total_pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=50.0, help="bundle size (default 50)")
    parser.add_argument("--entries", type=int, default=100_000, help="corpus entries (default 100,000)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    rng = np.random.default_rng(20240501)
    with tempfile.TemporaryDirectory(prefix="mt-eval-bench-") as scratch:
        root = Path(scratch)
        started = time.perf_counter()
        source, target = Language(rng, 50_000, 2_000), Language(rng, 50_000, 2_000)
        corpus = make_corpus(root, args.entries, source, target, rng)
        bundle, lines = make_bundle(root, args.size_mb, source, target, rng)
        size = bundle_bytes(bundle)
        print(f"synthetic data: {args.entries:,}-entry corpus, bundle of {size / 1e6:.1f} MB on disk "
              f"({lines:,} lines), made in {time.perf_counter() - started:.1f} s")
        wall, cpu, peak_mib, report = run_check(bundle, corpus)
        control = report.get("control") or {}
        recall = control.get("recall")
        print(f"mt-eval contamination (scan + planted control): {wall:6.1f} s wall ({cpu:.1f} s of CPU), peak "
              f"memory {peak_mib:,.0f} MiB; verdict {report['status']}, {len(report['hits'])} hits, control recall "
              f"{recall} "
              f"({control.get('found')} of {len(control.get('planted') or [])}) "
              f"(target < 60 s: {'met' if wall < 60 else 'MISSED'})")
        small, _lines = make_bundle(root / "small", args.size_mb / 10, source, target, rng)
        small_wall, _cpu, small_peak, _report = run_check(small, corpus)
        print(f"  the same corpus, a {bundle_bytes(small) / 1e6:.1f} MB bundle: {small_wall:.1f} s, peak memory "
              f"{small_peak:,.0f} MiB (memory follows the corpus, not the bundle)")
        sample_lines = [line for line in (bundle / "prompts.txt").read_text().splitlines()[:40]]
        texts = [json.loads(line) for line in corpus.read_text().splitlines()[:500]]
        corpus_texts = [t for row in texts for t in (row["source"], row["reference"])]
        baseline = all_pairs_seconds(sample_lines, corpus_texts, lines * args.entries * 2)
        print(f"all-pairs baseline (40 lines x 1,000 texts timed, scaled to {lines:,} x {args.entries * 2:,}): "
              f"{baseline:,.0f} s -> the check is {baseline / wall:,.0f}x faster (one scan of the baseline "
              "against two of the check)")
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        missed = record([Figure("contamination", f"check, {args.entries:,} entries, {size / 1e6:.0f} MB bundle",
                                ours=f"{wall:.1f} s", baseline=f"{baseline:,.0f} s all-pairs", value=wall,
                                target=below(60, " s"),
                                note=f"peak memory {peak_mib:,.0f} MiB; control recall {recall}")])
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
