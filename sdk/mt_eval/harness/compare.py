"""``mt-eval compare A.json B.json``: is B really better than A? Paired tests over the same corpus.

Both cards must verify (`mt_eval.harness.verify`: content hash, schema, corpus, metrics recomputed), come
from the same corpus (same sha256) and the same selection of it (same subset sha256). The references are
read from the corpus the cards name, the way the cards record it was read (or from ``--corpus`` or
``--source-file``/``--reference-file``), and the cards' selection is applied again. sacrebleu's paired
bootstrap resampling and paired approximate randomization give a p-value per metric.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.harness.runcard import RunCard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec


class CompareError(Exception):
    pass


def run_compare(args: argparse.Namespace) -> int:
    from mt_eval.corpus.arguments import spec_from_args

    try:
        rows = compare_cards(Path(args.baseline), Path(args.candidate), corpus=spec_from_args(args),
                             bootstrap=args.bootstrap, trials=args.trials, seed=args.seed,
                             extensions=getattr(args, "extension", []))
    except (CompareError, ValueError) as exc:
        print(f"mt-eval compare: {exc}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(rows), indent=2).decode() + "\n")
        return 0
    print(f"{'metric':8} {'A':>8} {'B':>8} {'B-A':>8} {'p (bootstrap)':>14} {'p (random.)':>12}")
    for row in rows:
        verdict = "significant" if row["p_randomization"] < 0.05 else "not significant"
        print(f"{row['metric']:8} {row['a']:8.2f} {row['b']:8.2f} {row['delta']:+8.2f} "
              f"{row['p_bootstrap']:14.4f} {row['p_randomization']:12.4f}  {verdict} at 0.05")
    return 0


def _verified_card(path: Path, corpus: CorpusSpec | None, extensions: Sequence[str]) -> RunCard:
    from mt_eval.harness.verify import render, verify_card

    verification = verify_card(path, corpus=corpus, extensions=extensions)
    if not verification.ok or verification.card is None:
        raise CompareError(f"{path} does not verify, so it cannot be compared:\n"
                           + render(verification, verbose=False).split("\n", 1)[-1])
    return verification.card


def compare_cards(baseline: Path, candidate: Path, *, corpus: CorpusSpec | None, bootstrap: int, trials: int,
                  seed: int, extensions: Sequence[str] = ()) -> list[dict[str, Any]]:
    from mt_eval.corpus.model import CorpusError
    from mt_eval.corpus.reader import load_corpus
    from mt_eval.corpus.selection import request_from_facts, select
    from mt_eval.harness.corpus import card_corpus_spec
    from mt_eval.harness.scoring import make_metrics

    a, b = _verified_card(baseline, corpus, extensions), _verified_card(candidate, corpus, extensions)
    if a.corpus.sha256 != b.corpus.sha256:
        raise CompareError(f"the cards come from different corpora ({a.corpus.name} {a.corpus.sha256[:12]} vs "
                           f"{b.corpus.name} {b.corpus.sha256[:12]}); paired tests need the same entries")
    subsets = [None if c.selection is None else c.selection.subset_sha256 for c in (a, b)]
    if subsets[0] != subsets[1]:
        raise CompareError(f"the cards ran different parts of the corpus ({_part(a)} vs {_part(b)}); paired tests "
                           "need the same entries: run both on the same selection")
    spec = card_corpus_spec(a, baseline, corpus)
    try:
        source = load_corpus(spec)
        chosen = source.entries
        if a.selection is not None:
            chosen = select(source, request_from_facts(msgspec.to_builtins(a.selection))).entries
    except CorpusError as exc:
        raise CompareError(f"{exc} (give the corpus with --corpus, or --source-file and --reference-file)") from exc
    if source.sha256 != a.corpus.sha256:
        raise CompareError(f"{spec.main_path} is not the corpus the cards were run on (sha256 differs)")
    if not source.references:
        raise CompareError(f"{spec.main_path} has no references: a translation-only run cannot be compared")
    hypotheses = [_hypotheses(card, chosen, name) for card, name in ((a, baseline), (b, candidate))]
    references = [[e["reference"] for e in chosen]]
    return _paired_tests(hypotheses, references, make_metrics(), bootstrap, trials, seed)


def _part(card: RunCard) -> str:
    if card.selection is None:
        return f"the whole corpus, {card.corpus.entries} entries"
    return f"{card.selection.entries_selected} of {card.selection.entries_in_corpus} entries"


def _hypotheses(card: RunCard, entries: list[dict[str, Any]], name: Path) -> list[str]:
    from mt_eval.corpus.model import entry_key

    by_id = {entry_key(r.id): r for r in card.results}
    missing = [e["id"] for e in entries if e["id"] not in by_id]
    if missing:
        raise CompareError(f"{name} has no result for {len(missing)} entries (e.g. {missing[0]}): "
                           "finish the run with --resume first")
    return [by_id[e["id"]].predicted or "" if by_id[e["id"]].error is None else "" for e in entries]


def _paired_tests(hypotheses: list[list[str]], references: list[list[str]], metrics: dict[str, Any],
                  bootstrap: int, trials: int, seed: int) -> list[dict[str, Any]]:
    from sacrebleu.significance import PairedTest

    previous = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        systems: list[tuple[str, Sequence[str]]] = [("A", hypotheses[0]), ("B", hypotheses[1])]
        _, bs = PairedTest(systems, metrics, references, test_type="bs", n_samples=bootstrap)()
        _, ar = PairedTest(systems, metrics, references, test_type="ar", n_samples=trials)()
    finally:
        if previous is None:
            os.environ.pop("SACREBLEU_SEED", None)
        else:
            os.environ["SACREBLEU_SEED"] = previous
    rows: list[dict[str, Any]] = []
    bs_results: dict[str, list[Any]] = dict(bs)
    ar_results: dict[str, list[Any]] = dict(ar)
    scored_names = [key for key in bs if key != "System"]  # sacrebleu keys results by its score names
    for name, scored in zip(metrics, scored_names, strict=True):
        base, other = bs_results[scored][0], bs_results[scored][1]
        rows.append({"metric": name, "a": round(base.score, 4), "b": round(other.score, 4),
                     "delta": round(other.score - base.score, 4), "p_bootstrap": other.p_value,
                     "p_randomization": ar_results[scored][1].p_value, "bootstrap_resamples": bootstrap,
                     "randomization_trials": trials, "seed": seed})
    return rows
