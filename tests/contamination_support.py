"""What the contamination reading tests share: a corpus of three entries, an empty bundle beside it, and the
check run without its planted control (each test plants its own sentence and asserts the hit's file and line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.contamination.engine import check_bundle
from mt_eval.contamination.settings import CheckSettings

SOURCE = "The old lighthouse keeper counts the ships every evening."
REFERENCE = "El viejo farero cuenta los barcos cada tarde."
SHORT = "Open the red door."  # under `standalone_below` words


def three_entry_corpus(tmp_path: Path) -> Path:
    """The three entries the reading tests plant (t1: a long sentence, t2: a short one, t3: too short to check)."""
    path = tmp_path / "test.jsonl"
    rows = [{"id": "t1", "source": SOURCE, "reference": REFERENCE},
            {"id": "t2", "source": SHORT, "reference": "Abre la puerta roja."},
            {"id": "t3", "source": "Yes.", "reference": "Sí."}]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def empty_bundle(tmp_path: Path) -> Path:
    directory = tmp_path / "bundle"
    directory.mkdir()
    (directory / "method.json").write_text('{"name": "x", "entry_point": "pipeline:M"}\n')
    return directory


def check(bundle: Path, corpus: Path, **settings: object):
    return check_bundle(bundle, [corpus], CheckSettings(plant=0, **settings))  # type: ignore[arg-type]


def located(report) -> set[tuple[str, int | None, str, str]]:
    return {(h.file, h.line, h.entry_id, h.side) for h in report.hits}




@pytest.fixture(name="corpus")
def corpus_fixture(tmp_path: Path) -> Path:
    return three_entry_corpus(tmp_path)


@pytest.fixture(name="bundle")
def bundle_fixture(tmp_path: Path) -> Path:
    return empty_bundle(tmp_path)
