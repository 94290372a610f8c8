"""``mt-eval validate --corpus``: the contamination check of each plugin, against corpora indexed once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mt_eval.contamination.engine import CheckError, build_index, check_bundle
from mt_eval.contamination.record import record_of
from mt_eval.contamination.run_check import validation_problems
from mt_eval.validate import PluginReport


def check_reports(reports: Sequence[PluginReport], corpora: Sequence[Path]) -> None:
    """Add each plugin's check to its report: the record, and a problem unless it is clean.

    Raises ValueError when a corpus cannot be read."""
    try:
        index = build_index(corpora)
    except CheckError as exc:
        raise ValueError(str(exc)) from exc
    for report in reports:
        if not Path(report.directory).is_dir():
            continue
        record = record_of(check_bundle(report.directory, corpora, index=index))
        report.contamination = record
        report.problems.extend(validation_problems(record, report.directory))
