"""The upstream harness beside ``mt-eval run``: the same 1,000 entries, the same trivial method, one run.

The upstream harness (the ``mt-eval-harness`` package, installed in a virtual environment of its own because
its command is also called ``mt-eval``) runs the plugin ``benchmarks/harness.py`` writes — a method that copies
its source — over the corpus that script writes, offline (two local language cards, no registry). Beside it,
in alternating rounds, ``mt-eval run`` of this SDK with its default bootstrap and with ``--bootstrap upstream``.

Figures:

- wall time of each whole command (ours as the baseline's peer: the median over rounds of each);
- the corpus scores, chrF++, BLEU and TER: ours against the upstream report's, to ±0.01;
- the 95% intervals of chrF++ and BLEU with ``--bootstrap upstream``: equal to the upstream report's, to the
  last of their 4 places.

Run: ``nox -s upstream`` (installs the upstream package), or
``python benchmarks/upstream.py --upstream VENV/bin/mt-eval [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import TRIVIAL, make_corpus, make_plugin, timed_run
from report import Figure, at_most, report

CARDS = {"eng": {"code": "eng", "name": "English", "iso639_1": "en", "aliases": []},
         "spa": {"code": "spa", "name": "Spanish", "iso639_1": "es", "aliases": []}}
METRICS = (("chrF++", "corpus_chrf"), ("BLEU", "corpus_bleu"), ("TER", "corpus_ter"))


def upstream_run(command: str, plugin: Path, corpus: Path, out: Path, home: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds of the upstream ``mt-eval run`` and its report's ``overall`` section."""
    cards = home / "cards"
    cards.mkdir(parents=True, exist_ok=True)
    for code, card in CARDS.items():
        (cards / f"{code}.json").write_text(json.dumps(card))
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "MT_EVAL_CARDS_DIR": str(cards),
           "MT_EVAL_NO_REMOTE_REGISTRY": "1"}
    started = time.perf_counter()
    done = subprocess.run([command, "run", "--non-interactive", "--corpus", str(corpus), "--method", str(plugin),
                           "--source-lang", "eng", "--target-lang", "spa", "-o", str(out), "-y"],
                          env=env, cwd=home, capture_output=True, text=True)
    wall = time.perf_counter() - started
    reports = sorted(out.glob("*_report.json"))
    if done.returncode != 0 or not reports:
        sys.exit(f"the upstream harness failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, json.loads(reports[-1].read_text())["overall"]


def our_card(out: Path) -> dict[str, Any]:
    metrics = json.loads((out / "card.json").read_text())["metrics"]
    return {m["name"]: m for m in metrics["metrics"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", required=True, help="the upstream harness's mt-eval command")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of upstream runs (each takes minutes)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        plugin = make_plugin(root, "trivial", TRIVIAL, "Copy")
        corpus = make_corpus(root, 1000)
        timed_run(plugin, corpus, root / "warm")
        ours: list[float] = [timed_run(plugin, corpus, root / "ours0")]
        upstream_ours: list[float] = [timed_run(plugin, corpus, root / "same0", "--bootstrap", "upstream")]
        theirs: list[float] = []
        overall: dict[str, Any] = {}
        for number in range(1, args.rounds + 1):  # alternating: ours, theirs, ours, …
            wall, overall = upstream_run(args.upstream, plugin, corpus, root / f"upstream{number}", root / "home")
            theirs.append(wall)
            ours.append(timed_run(plugin, corpus, root / f"ours{number}"))
            upstream_ours.append(timed_run(plugin, corpus, root / f"same{number}", "--bootstrap", "upstream"))
        fast, same = our_card(root / "ours0"), our_card(root / "same0")
    print(f"1,000 entries, a method copying its source; upstream: {args.upstream}")
    ours_s, same_s, theirs_s = (statistics.median(v) for v in (ours, upstream_ours, theirs))
    name = "upstream"
    score_gap = max(abs(fast[ours_name]["score"] - overall[key]) for ours_name, key in METRICS)
    intervals = overall["confidence_intervals"]
    interval_gap = max(abs(same[ours_name][side] - intervals[key][theirs_side])
                       for ours_name, key in METRICS[:2]
                       for side, theirs_side in (("ci_low", "ci_lower"), ("ci_high", "ci_upper")))
    default_gap = max(abs(fast[ours_name][side] - intervals[key][theirs_side])
                      for ours_name, key in METRICS[:2]
                      for side, theirs_side in (("ci_low", "ci_lower"), ("ci_high", "ci_upper")))
    figures = [
        Figure(name, "mt-eval run, 1,000 entries, with intervals", ours=f"{ours_s:.2f} s",
               baseline=f"{theirs_s:.1f} s", value=theirs_s / ours_s, peer=f"upstream {theirs_s:.1f} s",
               note=f"ratio = upstream ÷ ours (times faster); with --bootstrap upstream: {same_s:.2f} s = "
                    f"{theirs_s / same_s:.0f}x; medians of {len(ours)} runs of ours around {len(theirs)} upstream"),
        Figure(name, "corpus scores vs upstream (chrF++, BLEU, TER)", ours=", ".join(
            f"{fast[n]['score']:.2f}" for n, _ in METRICS), baseline=", ".join(
            f"{overall[k]:.2f}" for _, k in METRICS), value=score_gap, target=at_most(0.01, ""),
            note="value: the largest difference"),
        Figure(name, "intervals, --bootstrap upstream (chrF++, BLEU)", ours=", ".join(
            f"[{same[n]['ci_low']}, {same[n]['ci_high']}]" for n, _ in METRICS[:2]), baseline=", ".join(
            f"[{intervals[k]['ci_lower']}, {intervals[k]['ci_upper']}]" for _, k in METRICS[:2]),
            value=interval_gap, target=at_most(0, ""),
            note=f"value: the largest difference of a bound; the default bootstrap differs by up to "
                 f"{default_gap:.2f}"),
    ]
    missed = report(figures)
    return missed if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
