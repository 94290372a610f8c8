"""``mt-eval run --champollion-config PATH --pair en:es``: evaluate exactly the plugin a champollion pair names.

`champollion_selection` returns what the pair selects for the run: its plugin (the run's method), its language
codes (the run's pair), its ``model``, ``temperature``, ``batchSize`` and ``timeoutS`` (which replace ``--model``,
``--temperature``, ``--batch-size`` and ``--timeout``), and the record the run card keeps in
``method.champollion``: the config (path and sha256), the pair, the plugin it resolved to and the fingerprint the
lock file records for the pair's translations. The run checks the corpus's own pair against the selection once it
has read the corpus.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.champollion.config import read_config
from mt_eval.champollion.languages import language_candidates
from mt_eval.champollion.sync import pair_method


class ChampollionSelection(msgspec.Struct, frozen=True, kw_only=True):
    """What a champollion pair selects for ``mt-eval run``."""

    method: Path  # the pair's plugin directory
    languages: str  # its language pair, e.g. "eng>spa"
    model: str | None
    temperature: float | None
    batch_size: int
    timeout_s: float | None
    record: dict[str, Any]  # the run card's method.champollion

    def corpus_pair_problem(self, corpus_pair: str | None) -> str | None:
        """Why a corpus that names ``corpus_pair`` cannot be evaluated for this pair (``en>es`` and ``eng>spa``
        agree); None when it can (or names no pair)."""
        if not corpus_pair or ">" not in corpus_pair:
            return None
        for found, wanted in zip(corpus_pair.split(">", 1), self.languages.split(">", 1), strict=True):
            if not set(language_candidates(found)) & set(language_candidates(wanted)):
                return f"the corpus is {corpus_pair}, but the champollion pair translates {self.languages}"
        return None


def champollion_selection(config_path: str | Path, pair_key: str | None) -> ChampollionSelection:
    """The selection of the config's pair ``pair_key`` (the only pair when None); ValueError (or LookupError,
    OSError) says what is wrong and how to fix it."""
    config = read_config(config_path, flag="--champollion-config")
    if pair_key:
        try:
            pair = config.pair(pair_key)
        except KeyError as exc:
            raise ValueError(f"--pair '{pair_key}': {exc.args[0]}") from None
    elif len(config.pairs) == 1:
        pair = config.pairs[0]
    else:
        keys = ", ".join(p.key for p in config.pairs)
        example = config.pairs[0].key if config.pairs else "en:es"
        raise ValueError(f"--pair: {config.file} has {len(config.pairs)} pairs ({keys}); choose one, e.g. --pair "
                         f"{example}")
    method = pair_method(config, pair)
    settings = pair.settings
    record = {
        "config": str(config_path),
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
    return ChampollionSelection(method=Path(method.directory), languages=method.languages, model=settings.model,
                                temperature=settings.temperature, batch_size=settings.batch_size,
                                timeout_s=settings.timeout_s, record=record)
