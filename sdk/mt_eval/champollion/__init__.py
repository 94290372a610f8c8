"""champollion support: the same method plugins that are evaluated also translate an app's locale files.

``champollion.config.json`` (version 3) names a method plugin per language pair (`config`); the plugin is
found by name under ``.champollion/methods/`` or by path (`plugins`); locale codes become the method's
language codes (`languages`). ``mt-eval locales`` (`cli`, `sync`) translates the input locale's JSON files
into each target locale, protecting placeholders (`placeholders`) and the syntax of ICU plural and select
messages (`icu`), expanding i18next plurals (`locales`) and sending only what the lock file (`lockfile`)
says is missing or changed. ``mt-eval run --champollion-config`` evaluates the plugin a pair names
(`evaluate`). The Node package mt-eval-bridge implements the same, byte for byte
(`bridge/vectors/champollion/`).

Names are imported lazily, so importing this package for the command line stays cheap.
"""

from __future__ import annotations

from mt_eval.lazy import lazy_exports

_EXPORTS = {
    "read_config": "mt_eval.champollion.config",
    "ChampollionConfig": "mt_eval.champollion.config",
    "resolve_plugin": "mt_eval.champollion.plugins",
    "PluginNotFoundError": "mt_eval.champollion.plugins",
    "pair_languages": "mt_eval.champollion.languages",
    "protect": "mt_eval.champollion.placeholders",
    "restore": "mt_eval.champollion.placeholders",
    "pair_method": "mt_eval.champollion.sync",
    "sync_locales": "mt_eval.champollion.sync",
}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports("mt_eval.champollion", globals(), _EXPORTS)
