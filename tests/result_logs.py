"""Results and results logs, built for tests (`mt_eval.harness.results_log`, `mt_eval.harness.logged_results`)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from mt_eval.records import TranslationResult


def result(entry_id: str, predicted: str | None = "x", error: str | None = None) -> TranslationResult:
    return TranslationResult(id=entry_id, predicted=None if error else predicted, error=error)


def write_log(path: Path, results: list[TranslationResult], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in results) + tail)
    return path
