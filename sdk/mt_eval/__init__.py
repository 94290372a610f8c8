"""mt-eval SDK: build, wrap, validate and fairly evaluate machine-translation methods.

Public names are imported lazily so that ``mt-eval --help`` and ``import mt_eval`` stay fast.
"""

from __future__ import annotations

from mt_eval._version import __version__
from mt_eval.lazy import lazy_exports

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow down every CLI start

_EXPORTS = {
    "load_method": "mt_eval.loader",
    "LoadedMethod": "mt_eval.loader",
    "PluginLoadError": "mt_eval.loader",
    "validate_plugin": "mt_eval.validate",
    "TranslationMethod": "mt_eval.method_protocol",
    "DecisionMethod": "mt_eval.method_protocol",
    "DecisionConfig": "mt_eval.decisions.records",
    "Manifest": "mt_eval.manifest",
    "Dependency": "mt_eval.manifest",
    "MethodCard": "mt_eval.method_card",
    "CorpusEntry": "mt_eval.records",
    "TranslationResult": "mt_eval.records",
    "Usage": "mt_eval.records",
    "RunConfig": "mt_eval.records",
    "Problem": "mt_eval.problems",
    "ProblemsError": "mt_eval.problems",
    "hookimpl": "mt_eval.hookspecs",
    "make_plugin_manager": "mt_eval.extensions",
    "enable_extension": "mt_eval.extensions",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from mt_eval.decisions.records import DecisionConfig
    from mt_eval.extensions import enable_extension, make_plugin_manager
    from mt_eval.hookspecs import hookimpl
    from mt_eval.loader import LoadedMethod, PluginLoadError, load_method
    from mt_eval.manifest import Dependency, Manifest
    from mt_eval.method_card import MethodCard
    from mt_eval.method_protocol import DecisionMethod, TranslationMethod
    from mt_eval.problems import Problem, ProblemsError
    from mt_eval.records import CorpusEntry, RunConfig, TranslationResult, Usage
    from mt_eval.validate import validate_plugin


__getattr__ = lazy_exports("mt_eval", globals(), _EXPORTS)
