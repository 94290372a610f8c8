"""The RunConfig of a run from its command-line arguments (``mt-eval run`` and ``mt-eval freeze init``)."""

from __future__ import annotations

import argparse
import sys

import msgspec

from mt_eval.corpus.doubts import refuse_pair_mismatch
from mt_eval.corpus.model import Corpus
from mt_eval.harness.commands import method_params
from mt_eval.harness.run_directory import RunError
from mt_eval.manifest import Manifest
from mt_eval.pairs import PairError, parse_pair, quoted, supported_form
from mt_eval.records import RunConfig


def run_config(args: argparse.Namespace, corpus: Corpus, manifest: Manifest) -> RunConfig:
    """The RunConfig of ``mt-eval run`` (and ``mt-eval freeze init``) from its arguments. The pair is
    ``--pair`` in any spelling `mt_eval.pairs` reads, else the corpus's, else the method's first; a ``--pair``
    the corpus's own contradicts is refused unless ``--accept-doubt pair-mismatch`` confirms it."""
    supported = manifest.supported_pairs
    name = manifest.method_id or manifest.name
    try:
        pair = parse_pair(args.pair) if args.pair else corpus.pair or (supported[0] if supported else None)
    except PairError as exc:
        raise RunError(f"--pair: {exc}") from None
    if not pair:
        raise RunError("no language pair: the corpus does not declare one and the method lists no supported_pairs; "
                       "give one, e.g. --pair 'eng>spa' (or --pair eng:spa)")
    refuse_pair_mismatch(corpus, pair, getattr(args, "accept_doubt", []))
    method_pair = supported_form(pair, supported)
    if method_pair is None:
        raise RunError(f"{name} supports {quoted(supported)}, not '{pair}': choose one with --pair (e.g. --pair "
                       f"'{supported[0]}') or use a corpus in a supported pair")
    if method_pair != pair and not getattr(args, "quiet", False):
        print(f"pair '{pair}' is {name}'s '{method_pair}'", file=sys.stderr)
    source, _, target = method_pair.partition(">")
    fields = {"source_lang": source, "target_lang": target, "model": args.model, "base_url": args.base_url,
              "temperature": args.temperature, "max_tokens": args.max_tokens, "batch_size": args.batch_size,
              "concurrency": args.concurrency, "timeout_s": args.timeout, "seed": args.seed,
              "params": method_params(args.param)}
    try:
        return msgspec.convert({k: v for k, v in fields.items() if v is not None}, RunConfig)
    except msgspec.ValidationError as exc:
        raise RunError(f"invalid run configuration: {exc}") from exc
