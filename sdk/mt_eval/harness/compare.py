"""``mt-eval compare A.json B.json``: is B really better than A? Paired tests over the same corpus.

Both cards must verify (`mt_eval.harness.verify`: content hash, schema, corpus, metrics recomputed), come
from the same corpus (same sha256) and the same selection of it (same subset sha256). The references are
read from the corpus the cards name, the way the cards record it was read (or from ``--corpus`` or
``--source-file``/``--reference-file``), and the cards' selection is applied again; a truncated card is never
compared with a full one. The cards' covariates must be the same (`mt_eval.harness.compare_checks`;
``--allow-diff NAME`` accepts a named difference). Over the scored entries, sacrebleu's paired bootstrap
resampling and paired approximate randomization give a p-value per metric, and a case-level bootstrap gives a
95% interval of the difference B − A. The report also counts the entries whose outputs differ (for two runs
of the same method: its repeat-run stability) and puts the measured latencies side by side when the hardware
labels match.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.errors import ExpectedError
from mt_eval.harness.runcard import RunCard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.corpus.reader import CorpusSpec


class CompareError(ExpectedError):
    """The two cards cannot be compared; the message says why and what to do."""


def _verified_card(path: Path, corpus: CorpusSpec | None, extensions: Sequence[str]
                   ) -> tuple[RunCard, dict[str, Any] | None]:
    from mt_eval.harness.verify import render, verify_card

    verification = verify_card(path, corpus=corpus, extensions=extensions)
    if not verification.ok or verification.card is None:
        raise CompareError(f"{path} does not verify, so it cannot be compared:\n"
                           + render(verification, verbose=False).split("\n", 1)[-1])
    return verification.card, verification.data


def compare_cards(baseline: Path, candidate: Path, *, corpus: CorpusSpec | None, bootstrap: int, trials: int,
                  seed: int, extensions: Sequence[str] = (), allow_diff: Sequence[str] = ()) -> dict[str, Any]:
    """The comparison report (`mt_eval.harness.compare_report` renders it); `CompareError` says why not."""
    from mt_eval.corpus.families import scored_entries
    from mt_eval.corpus.model import CorpusError
    from mt_eval.corpus.reader import load_corpus
    from mt_eval.corpus.selection import request_from_facts, select
    from mt_eval.harness.compare_checks import covariate_differences, latency_comparison, output_differences
    from mt_eval.harness.corpus import card_corpus_spec
    from mt_eval.harness.scoring import make_metrics

    (a, a_data), (b, b_data) = (_verified_card(baseline, corpus, extensions),
                                _verified_card(candidate, corpus, extensions))
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
    differences = covariate_differences(a, a_data, b, b_data)
    refused = [d for d in differences if d.name not in allow_diff]
    if refused:
        raise CompareError("the cards' covariates differ or are missing, so their scores are not comparable:\n  "
                           + "\n  ".join(str(d) for d in refused)
                           + f"\naccept a difference you mean to compare with --allow-diff NAME (e.g. --allow-diff "
                             f"{refused[0].name})")
    scored = scored_entries(chosen)
    hypotheses = [_hypotheses(card, scored, name) for card, name in ((a, baseline), (b, candidate))]
    references = [[e["reference"] for e in scored]]
    return {"a": str(baseline), "b": str(candidate),
            "rows": _paired_tests(hypotheses, references, make_metrics(), bootstrap, trials, seed, verified=a),
            "allowed_differences": [{"name": d.name, "a": d.a, "b": d.b} for d in differences],
            "outputs": output_differences(a, b, chosen), "latency": latency_comparison(a, b, list(allow_diff)),
            "methods": {"a": _method(a), "b": _method(b)}}


def _method(card: RunCard) -> dict[str, Any]:
    return {"method_id": card.method.method_id, "code_sha256": card.method.code_sha256, "run_id": card.run_id}


def _part(card: RunCard) -> str:
    if card.selection is None:
        return f"the whole corpus, {card.corpus.entries} entries"
    return f"{card.selection.entries_selected} of {card.selection.entries_in_corpus} entries"


def _hypotheses(card: RunCard, entries: Sequence[dict[str, Any]], name: Path) -> list[str]:
    from mt_eval.corpus.model import entry_key

    # Each result's hypothesis (a failed entry's is empty) rather than the result: a million results are big.
    by_id = {entry_key(r.id): r.predicted or "" if r.error is None else "" for r in card.results}
    missing = [e["id"] for e in entries if e["id"] not in by_id]
    if missing:
        raise CompareError(f"{name} has no result for {len(missing)} entries (e.g. {missing[0]}): "
                           "finish the run with --resume first")
    return [by_id[e["id"]] for e in entries]


def _paired_tests(hypotheses: list[list[str]], references: list[list[str]], metrics: dict[str, Any],
                  bootstrap: int, trials: int, seed: int, *, verified: RunCard | None = None) -> list[dict[str, Any]]:
    if list(hypotheses[0]) == list(hypotheses[1]):
        return _identical(hypotheses[0], references, metrics, bootstrap, trials, seed, verified)
    from sacrebleu.significance import PairedTest

    from mt_eval.harness.scoring import paired_difference

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
        _, low, high = paired_difference(metrics[name], list(hypotheses[0]), list(hypotheses[1]), references,
                                         resamples=bootstrap, seed=seed)
        a, b = float(base.score), float(other.score)  # older sacrebleu releases give numpy scalars
        rows.append({"metric": name, "a": round(a, 4), "b": round(b, 4), "delta": round(b - a, 4),
                     "delta_ci_low": low, "delta_ci_high": high, "p_bootstrap": float(other.p_value),
                     "p_randomization": float(ar_results[scored][1].p_value),
                     "bootstrap_resamples": bootstrap, "randomization_trials": trials, "seed": seed})
    return rows


def _identical(hypotheses: list[str], references: list[list[str]], metrics: dict[str, Any], bootstrap: int,
               trials: int, seed: int, verified: RunCard | None = None) -> list[dict[str, Any]]:
    """Two runs with the same outputs on every scored entry: a difference of 0, p = 1 (sacrebleu counts only
    resamples whose difference exceeds the observed one, and would give 1/(n+1) here). The scores are those of
    the ``verified`` card, which its verification recomputed from these outputs (sacrebleu's corpus score would
    hold the n-grams of every reference: gigabytes for a million entries)."""
    stated = {} if verified is None or verified.metrics is None else {
        m.name: m.score for m in verified.metrics.metrics}
    rows = []
    for name, metric in metrics.items():
        value = stated[name] if name in stated else round(float(metric.corpus_score(hypotheses, references).score), 4)
        rows.append({"metric": name, "a": value, "b": value, "delta": 0.0, "delta_ci_low": 0.0, "delta_ci_high": 0.0,
                     "p_bootstrap": 1.0, "p_randomization": 1.0, "bootstrap_resamples": bootstrap,
                     "randomization_trials": trials, "seed": seed, "identical": True})
    return rows
