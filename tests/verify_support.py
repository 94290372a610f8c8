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


def run_with_failures(directory: Path, *options: str) -> Path:
    """The card of a run on 8 entries, the first 3 failing (the reverse fixture fails a "!fail" source)."""
    corpus = write_corpus(directory / "corpus.json")
    data = json.loads(corpus.read_text())
    for entry in data["entries"][:3]:
        entry["source"] = "!fail " + entry["source"]
    corpus.write_text(json.dumps(data))
    assert main(["run", "--method", str(REVERSE), "--corpus", str(corpus), "--out", str(directory / "run"), "--quiet",
                 "--resamples", "100", "--max-errors", "3", *LENIENT, *options]) == 0
    return directory / "run" / "card.json"
