"""The RunConfig a run gives its method, from its request (``mt-eval run`` and ``mt-eval freeze init``), and
what a run would use, read without running the method (what ``freeze init`` freezes)."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from mt_eval.corpus.doubts import refuse_pair_mismatch
from mt_eval.corpus.model import Corpus
from mt_eval.harness.request import RunRequest
from mt_eval.harness.run_directory import RunError
from mt_eval.manifest import Manifest
from mt_eval.pairs import PairError, parse_pair, quoted, supported_form
from mt_eval.records import RunConfig


def run_config(request: RunRequest, corpus: Corpus, manifest: Manifest) -> RunConfig:
    """The RunConfig of the run ``request`` asks for, on ``corpus``, for the method ``manifest`` describes. The
    pair is ``--pair`` in any spelling `mt_eval.pairs` reads, else the corpus's, else the method's first; a
    ``--pair`` the corpus's own contradicts is refused unless ``--accept-doubt pair-mismatch`` confirms it."""
    supported = manifest.supported_pairs
    name = manifest.method_id or manifest.name
    try:
        pair = parse_pair(request.pair) if request.pair else corpus.pair or (supported[0] if supported else None)
    except PairError as exc:
        raise RunError(f"--pair: {exc}") from None
    if not pair:
        raise RunError("no language pair: the corpus does not declare one and the method lists no supported_pairs; "
                       "give one, e.g. --pair 'eng>spa' (or --pair eng:spa)")
    refuse_pair_mismatch(corpus, pair, request.corpus.accept)
    method_pair = supported_form(pair, supported)
    if method_pair is None:
        raise RunError(f"{name} supports {quoted(supported)}, not '{pair}': choose one with --pair (e.g. --pair "
                       f"'{supported[0]}') or use a corpus in a supported pair")
    if method_pair != pair and not request.quiet:
        print(f"pair '{pair}' is {name}'s '{method_pair}'", file=sys.stderr)
    source, _, target = method_pair.partition(">")
    given, calls = request.settings, request.calls
    fields = {"source_lang": source, "target_lang": target, "model": given.model, "base_url": given.base_url,
              "temperature": given.temperature, "max_tokens": given.max_tokens, "batch_size": calls.batch_size,
              "concurrency": calls.concurrency, "timeout_s": calls.timeout_s, "seed": request.seed,
              "params": given.params}
    try:
        return msgspec.convert({k: v for k, v in fields.items() if v is not None}, RunConfig)
    except msgspec.ValidationError as exc:
        raise RunError(f"invalid run configuration: {exc}") from exc


def run_inputs(request: RunRequest) -> dict[str, Any]:
    """What ``mt-eval run`` would use for ``request`` (`build_manifest`'s inputs), read without running the
    method's code."""
    from mt_eval.harness.corpus import read_run_corpus, settle_run_corpus
    from mt_eval.harness.run_config import run_config
    from mt_eval.loader import PluginLoadError, read_plugin

    source, problems = read_plugin(request.method)
    errors = [p for p in problems if p.severity == "error"]
    if source is None or errors:
        raise PluginLoadError(errors, summary=f"{request.method} is not a valid method plugin")
    corpus = read_run_corpus(request.corpus)
    config = run_config(request, corpus, source.manifest)
    selection = settle_run_corpus(request.corpus, corpus, config.pair, request.selection, quiet=True)
    from mt_eval.harness.freeze import scoring_facts
    from mt_eval.harness.policy import PolicyError

    try:
        scoring = scoring_facts(request.resamples, request.bootstrap, request.policy)
    except PolicyError as exc:
        raise ValueError(str(exc)) from None
    return {"method_dir": source.directory, "method_id": source.method_id, "corpus": corpus,
            "entries": selection.entries, "selection": selection.facts, "config": config, "settings": request.calls,
            "plan": request.latency, "scoring": scoring}
