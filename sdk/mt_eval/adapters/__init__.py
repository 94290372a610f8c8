"""Adapters for translator programs that know nothing of the bridge: line- or record-oriented CLIs.

`ProcessTranslator` is the entry point; see the README's "Wrapping a translator program".
"""

from mt_eval.adapters.framing import LINES, NULL_FLUSH, Framing, FramingError
from mt_eval.adapters.record_process import ProcessOptions, RecordFailure, RecordProcess
from mt_eval.adapters.stage import Stage, StageRunner
from mt_eval.adapters.translator import ProcessTranslator, TextResult

__all__ = ["LINES", "NULL_FLUSH", "Framing", "FramingError", "ProcessOptions", "ProcessTranslator", "RecordFailure",
           "RecordProcess", "Stage", "StageRunner", "TextResult"]
