"""Rubric files for grading: an ordered score question, e.g. 0–4 adequacy with a description per level.

``{"name": "adequacy", "instructions": "...", "levels": [{"value": 0, "description": "..."}, ...]}``, lowest
level first. The name is the question's name in what a grader receives. ``rubrics/adequacy-0-4.json`` is the
default.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import msgspec

from mt_eval.decisions.records import Question, ScoreLevel, score_findings
from mt_eval.field_words import described
from mt_eval.problems import Finding, ProblemsError
from mt_eval.strict import StrictStruct, decode_json_file

DEFAULT_RUBRIC = Path(__file__).parent / "rubrics" / "adequacy-0-4.json"


class Rubric(StrictStruct, kw_only=True):
    """A grading rubric: what is asked and its ordered levels."""

    name: Annotated[str, described(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", description="The question's name.",
                                   pattern_means="a name (letters, digits, - and _)")]
    instructions: Annotated[str, msgspec.Meta(min_length=1)]
    levels: Annotated[list[ScoreLevel], described(
        description="The levels, lowest value first.",
        hint='a rubric is ordered: list its levels lowest first, e.g. [{"value": 0, "description": "..."}, '
             '{"value": 1, "description": "..."}]')]
    version: str | None = None
    description: str | None = None

    def question(self) -> Question:
        """The rubric as the score question a grader is asked."""
        return Question(type="score", instructions=self.instructions, levels=list(self.levels))

    def findings(self) -> Iterator[Finding]:
        yield from score_findings(self.levels, "a rubric")
        for i, level in enumerate(self.levels or []):  # (people's sheets are read with their cells stripped)
            if level.label is not None and level.label != level.label.strip():
                yield Finding(("levels", i, "label"), f"the label {json.dumps(level.label, ensure_ascii=False)} has "
                              "spaces at its ends, which a sheet's answer loses (its cells are read stripped): no "
                              "answer could match it", "remove the spaces", code="spaces")
        if self.name in SHEET_COLUMNS:
            yield Finding(("name",), f'"{self.name}" is a column every grading sheet has already',
                          f"name the question otherwise (not {', '.join(SHEET_COLUMNS)})", code="reserved")


# The columns of a CSV sheet (`mt_eval.decisions.sheets`) besides the rubric's own: a rubric named like one would
# share its column.
SHEET_COLUMNS = ("item", "source_lang", "target_lang", "source", "candidate", "reference", "comment")


def read_rubric(path: str | Path | None) -> tuple[Rubric, str]:
    """The rubric in ``path`` (default: 0–4 adequacy) and the SHA-256 of its file; `ProblemsError` lists every
    problem."""
    file = Path(path) if path is not None else DEFAULT_RUBRIC
    rubric, problems = decode_json_file(file, Rubric)
    errors = [p for p in problems if p.severity == "error"]
    if rubric is None or errors:
        raise ProblemsError(problems, summary=f"{file} is not a usable rubric")
    return rubric, hashlib.sha256(file.read_bytes()).hexdigest()


def rubric_sha256(rubric: Rubric) -> str:
    """The SHA-256 of the rubric itself (its canonical JSON): what a key.json's copy of it is checked against, where
    the rubric's file (whose bytes ``read_rubric`` hashes) is not at hand."""
    return hashlib.sha256(msgspec.json.encode(rubric, order="sorted")).hexdigest()


def rubric_text(rubric: Rubric, sheet_format: str) -> str:
    """The rubric as instructions for people."""
    lines = [f"# Grading: {rubric.name}", "", rubric.instructions, "",
             "Answer with one level for each item:", ""]
    for level in rubric.levels:
        lines.append(f"- **{level.name}**" + (f": {level.description}" if level.description else ""))
    where = {"csv": f'the "{rubric.name}" column of sheet.csv',
             "jsonl": '"answer" in sheet.jsonl (a level, or when unsure {"level": probability, ...} giving every '
                      'level a probability, the probabilities summing to 1)',
             "both": f'the "{rubric.name}" column of sheet.csv, or "answer" in sheet.jsonl'}[sheet_format]
    lines += ["", f"Write your answer in {where}. Leave it empty to skip an item. You are not told which system "
                  "produced the candidates, and the items are in random order.", ""]
    return "\n".join(lines)
