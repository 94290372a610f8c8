"""The RunConfig of a run from its command-line arguments (``mt-eval run`` and ``mt-eval freeze init``)."""

from __future__ import annotations

import argparse

import msgspec

from mt_eval.corpus.model import Corpus
from mt_eval.harness.commands import method_params
from mt_eval.harness.run_directory import RunError
from mt_eval.manifest import Manifest
from mt_eval.records import RunConfig


def run_config(args: argparse.Namespace, corpus: Corpus, manifest: Manifest) -> RunConfig:
    """The RunConfig of ``mt-eval run`` (and ``mt-eval freeze init``) from its arguments."""
    supported = manifest.supported_pairs
    pair = args.pair or corpus.pair or (supported[0] if supported else None)
    if not pair or ">" not in pair:
        raise RunError("no language pair: the corpus does not name one and the method supports any; "
                       "give --pair SRC>TGT, e.g. --pair eng>spa")
    if supported and pair not in supported:
        raise RunError(f"{manifest.method_id or manifest.name} supports {', '.join(supported)}, not {pair}; choose "
                       "one with --pair or use a corpus in a supported pair")
    source, _, target = pair.partition(">")
    fields = {"source_lang": source, "target_lang": target, "model": args.model, "base_url": args.base_url,
              "temperature": args.temperature, "max_tokens": args.max_tokens, "batch_size": args.batch_size,
              "concurrency": args.concurrency, "timeout_s": args.timeout, "seed": args.seed,
              "params": method_params(args.param)}
    try:
        return msgspec.convert({k: v for k, v in fields.items() if v is not None}, RunConfig)
    except msgspec.ValidationError as exc:
        raise RunError(f"invalid run configuration: {exc}") from exc
