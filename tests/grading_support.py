"""What the grading tests share: `grade` on a run card, its grading card, and filling a people's sheet (the demo
run they grade is the `demo_run` fixture, in conftest.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from mt_eval.cli import main

REPO = Path(__file__).parent.parent
RULES = REPO / "examples" / "rules-grader"


def grade(card: Path, *args: str) -> int:
    return main(["grade", str(card), "--corpus", str(REPO / "examples" / "data" / "eng-spa-demo.json"),
                 "--resamples", "200", "--quiet", *args])


def grading_card(out: Path) -> dict[str, Any]:
    return json.loads((out / "grading-card.json").read_text(encoding="utf-8"))


def fill_csv(sheet: Path, answers: dict[int, str]) -> Path:
    with sheet.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        row["adequacy"] = answers.get(i, "")
    out = sheet.with_name(f"filled-{len(answers)}.csv")
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out
