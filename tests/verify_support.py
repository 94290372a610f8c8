"""What the verify tests share: a small corpus, and a card `mt-eval run` wrote on it."""

from __future__ import annotations

import json
from pathlib import Path

from gate_policies import LENIENT
from mt_eval.cli import main

REVERSE = Path(__file__).parent / "fixtures" / "reverse"


def write_corpus(path: Path, n: int = 8) -> Path:
    entries = [{"id": f"e{i}", "source": f"the cat number {i} sleeps", "reference": f"el gato {i} duerme"}
               for i in range(n)]
    path.write_text(json.dumps({"dataset": {"name": "cats"}, "language_pair": {"source": "eng", "target": "spa"},
                                "entries": entries}))
    return path


def run_card(tmp_path: Path) -> Path:
    """The card of the reverse fixture's run on an 8-entry corpus (in ``tmp_path``), as the run wrote it."""
    corpus = write_corpus(tmp_path / "corpus.json")
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(tmp_path / "run"),
                 "--quiet", "--resamples", "100", *LENIENT]) == 0
    return tmp_path / "run" / "card.json"
