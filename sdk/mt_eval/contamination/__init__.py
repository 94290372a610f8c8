"""The contamination check: a method's bundle must not contain the evaluation data.

`check_bundle` compares every piece of text in a plugin directory with a corpus's sources and references;
`check_corpora` compares two corpora. Both prove a "clean" verdict with a planted control. `require_clean`
is the policy a headline gate or a publish step calls on a run card's ``contamination`` record.

Names are imported lazily: the run card imports `mt_eval.contamination.record` without loading numpy.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mt_eval.contamination.engine import CheckError, check_bundle, check_corpora
    from mt_eval.contamination.policy import require_clean
    from mt_eval.contamination.report import Report
    from mt_eval.contamination.settings import CheckSettings

_EXPORTS = {
    "check_bundle": "mt_eval.contamination.engine",
    "check_corpora": "mt_eval.contamination.engine",
    "CheckError": "mt_eval.contamination.engine",
    "CheckSettings": "mt_eval.contamination.settings",
    "Report": "mt_eval.contamination.report",
    "require_clean": "mt_eval.contamination.policy",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mt_eval.contamination' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
