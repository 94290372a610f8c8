"""``mt-eval run --champollion-config PATH --pair en:es``: evaluate exactly the plugin a champollion pair names.

The pair's plugin becomes ``--method``, its language codes ``--pair``, and its ``model``, ``temperature`` and
``batchSize`` replace ``--model``, ``--temperature`` and ``--batch-size``. The run card's
``method.champollion`` records the config (path and sha256), the pair, the plugin it resolved to and the
fingerprint the lock file records for the pair's translations.
"""

from __future__ import annotations

import argparse
import hashlib
import os

from mt_eval.champollion.config import read_config
from mt_eval.champollion.languages import language_candidates
from mt_eval.champollion.sync import pair_method


def apply_champollion_config(args: argparse.Namespace) -> None:
    """Fill ``args`` of ``mt-eval run`` from the config's pair; raise ValueError saying what is wrong."""
    if args.method:
        raise ValueError("give --method or --champollion-config, not both: the config names the method")
    config = read_config(args.champollion_config)
    if args.pair:
        try:
            pair = config.pair(args.pair)
        except KeyError as exc:
            raise ValueError(f"--pair '{args.pair}': {exc.args[0]}") from None
    elif len(config.pairs) == 1:
        pair = config.pairs[0]
    else:
        keys = ", ".join(p.key for p in config.pairs)
        example = config.pairs[0].key if config.pairs else "en:es"
        raise ValueError(f"--pair: {config.file} has {len(config.pairs)} pairs ({keys}); choose one, e.g. --pair "
                         f"{example}")
    method = pair_method(config, pair)
    _check_corpus_pair(args, method.languages)
    settings = pair.settings
    args.method = str(method.directory)
    args.pair = method.languages
    if settings.model is not None:
        args.model = settings.model
    if settings.temperature is not None:
        args.temperature = settings.temperature
    args.batch_size = settings.batch_size
    args.champollion_source = {
        "config": str(args.champollion_config),
        "config_sha256": hashlib.sha256(config.file.read_bytes()).hexdigest(),
        "pair": pair.key,
        "source_locale": pair.source,
        "target_locale": pair.target,
        "method_plugin": settings.method_plugin,
        "plugin_directory": os.path.relpath(method.directory, config.directory).replace(os.sep, "/"),
        "languages": method.languages,
        "settings": {"model": settings.model, "temperature": settings.temperature, "batchSize": settings.batch_size},
        "method_fingerprint": method.fingerprint,
    }


def _check_corpus_pair(args: argparse.Namespace, languages: str) -> None:
    """A corpus that names its pair must be in the pair's languages (``en>es`` and ``eng>spa`` agree).

    The corpus is read by the reader ``mt-eval run`` uses (``--corpus`` or parallel text); the run itself
    reports a corpus that cannot be read, and refuses a doubtful one in the pair's languages."""
    from mt_eval.corpus.arguments import spec_from_args
    from mt_eval.corpus.reader import load_corpus

    try:
        spec = spec_from_args(args)
        pair = load_corpus(spec).pair if spec is not None else None
    except ValueError:  # CorpusError too: the run reports an unreadable corpus itself
        return
    if not pair or ">" not in pair:
        return
    for found, wanted in zip(pair.split(">", 1), languages.split(">", 1), strict=True):
        if not set(language_candidates(found)) & set(language_candidates(wanted)):
            raise ValueError(f"the corpus is {pair}, but the champollion pair translates {languages}")
