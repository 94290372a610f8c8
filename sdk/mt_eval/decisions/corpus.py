"""Typed-decision corpora: rows with questions and gold answers, as JSONL, a JSON list, or a JSON object
``{"name", "license", "description", "rows": [...]}``.

Every row is decoded strictly into a `DecisionCase`; every problem in the file is reported at once, each
naming the line (JSONL) or row index, the row's id and the JSON path of the question. A gold answer is an
option's name (``true``/``false`` for noul) or a distribution over every option summing to 1.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.corpus.files import stream_name
from mt_eval.decisions.answers import DEFAULT_TOLERANCE, distribution_problem
from mt_eval.decisions.records import DecisionCase, Question, number_text
from mt_eval.json_input import other_encoding
from mt_eval.problems import Problem, ProblemsError
from mt_eval.strict import decode_value, parse_json


class DecisionCorpusError(ProblemsError):
    """The corpus cannot be used; ``problems`` lists every reason with its place."""


@dataclass
class DecisionCorpus:
    path: Path
    name: str
    sha256: str
    rows: list[DecisionCase]
    gold: list[dict[str, list[float]]]  # per row: question → gold distribution over its options, in order
    license: str | None = None
    description: str | None = None

    def questions_by_type(self) -> dict[str, int]:
        counts = {"noul": 0, "choice": 0, "score": 0}
        for row in self.rows:
            for question in row.questions.values():
                counts[question.type] += 1
        return counts

    @property
    def gold_questions(self) -> int:
        return sum(len(g) for g in self.gold)


def gold_distribution(question: Question, answer: Any, tolerance: float = DEFAULT_TOLERANCE, *, called: str = "gold"
                      ) -> tuple[list[float] | None, str | None]:
    """A gold answer as a distribution over the question's options, or why it cannot be one (the answer ``called``
    so: a person's on a sheet is "the answer"). A distribution that sums to 1 within ``tolerance`` (annotators'
    shares rounded: 0.3333 three times) is scaled to sum to 1."""
    options = question.option_names
    if isinstance(answer, bool) and question.type == "noul":
        answer = "true" if answer else "false"
    if isinstance(answer, str):
        if answer not in options:
            shown = ", ".join(f'"{o}"' for o in options)
            return None, f'{called} "{answer}" is not an option of this question (the options are {shown})'
        return [1.0 if option == answer else 0.0 for option in options], None
    if isinstance(answer, dict):
        problem = distribution_problem(question, answer, tolerance, sum_fix="write shares that sum to 1 (shares "
                                       "rounded to 0.3333 are read as thirds)")
        if problem is not None:
            return None, f"{called} distribution: {problem}"
        values = [float(answer[option]) for option in options]
        total = sum(values)  # (within the tolerance of 1: made exactly 1, as the scores' closed forms assume)
        return [value / total for value in values], None
    named = _as_name(answer)
    if named is not None and named in options:  # a score level's name, written as a number
        return None, f'{called} {named} is a number: an option\'s name is a string; write "{named}"'
    subject = "a gold answer" if called == "gold" else called
    return None, f"{subject} is an option's name or a distribution {{option: probability}}"


def _as_name(answer: Any) -> str | None:
    """A number as a score level's name would write it (None for anything else)."""
    if not isinstance(answer, int | float) or isinstance(answer, bool):
        return None
    try:
        return number_text(answer) if math.isfinite(answer) else None
    except OverflowError:  # (an integer past any float)
        return None


def read_decision_corpus(path: str | Path, *, tolerance: float = DEFAULT_TOLERANCE) -> DecisionCorpus:
    """Read and check a typed-decision corpus; `DecisionCorpusError` lists every problem."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DecisionCorpusError([Problem(file=str(path), path="$", message=f"cannot read: {exc.strerror or exc}",
                                           code="io")], summary=f"cannot read decision corpus {path}") from exc
    meta: dict[str, Any] = {}
    items, problems = _items(path, raw, meta)
    rows: list[DecisionCase] = []
    gold: list[dict[str, list[float]]] = []
    seen: dict[str, str] = {}
    for where, data in items:
        label = where + (f' (row "{data["id"]}")' if isinstance(data, dict) and isinstance(data.get("id"), str)
                         else "")
        case, found = _case(data, label)
        problems.extend(found)
        if case is None or found:
            continue
        if case.id in seen:
            problems.append(Problem(file=label, path="$.id", code="duplicate", hint="give every row its own id",
                                    message=f'id "{case.id}" is already used at {seen[case.id]}'))
            continue
        seen[case.id] = where
        distributions: dict[str, list[float]] = {}
        for name, answer in case.gold.items():
            distribution, problem = gold_distribution(case.questions[name], answer, tolerance)
            if problem is not None:
                problems.append(_gold_problem(label, name, problem))
            else:
                assert distribution is not None
                distributions[name] = distribution
        rows.append(case)
        gold.append(distributions)
    if not items and not problems:
        problems.append(Problem(file=str(path), path="$", message="the corpus has no rows",
                                hint='add rows: {"id", "state", "questions", "gold"}, one per line', code="empty"))
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise DecisionCorpusError(problems, summary=f"{path}: {len(errors)} problem{'s' if len(errors) != 1 else ''}")
    named = str(meta.get("name") or stream_name(path) or path.stem)  # (a pipe's: its path, not its descriptor's number)
    return DecisionCorpus(path=path, name=named, sha256=hashlib.sha256(raw).hexdigest(),
                          rows=rows, gold=gold, license=meta.get("license"), description=meta.get("description"))


def _gold_problem(label: str, name: str, message: str) -> Problem:
    return Problem(file=label, path=f"$.gold.{name}" if name.isidentifier() else f"$.gold[{json.dumps(name)}]",
                   message=message, code="gold")


def _case(data: Any, label: str) -> tuple[DecisionCase | None, list[Problem]]:
    """One row decoded: a row msgspec takes as it is (its rules run as it is built) and that UTF-8 can hold is the
    row the strict reading would build, at msgspec's speed; any other is read strictly, every problem named (the
    strict reading alone took 12 s for 20,000 rows, before anything was decided). A score question's gold answer
    that is a number (its level's value, ``3`` for ``"3"``) is said as `gold_distribution` says it, with the fix."""
    numbers = _score_gold_numbers(data)
    if numbers:
        case, problems = _case({**data, "gold": {k: v for k, v in data["gold"].items() if k not in numbers}}, label)
        for name, answer in numbers.items():
            question = case.questions.get(name) if case is not None else None
            if question is not None:
                problems.append(_gold_problem(label, name, gold_distribution(question, answer)[1] or ""))
        return case, problems
    if isinstance(data, dict):
        try:
            case = msgspec.convert(data, DecisionCase)
            _encode(data)  # (a lone surrogate: the strict reading says where)
        except (msgspec.ValidationError, msgspec.EncodeError, ValueError, TypeError, OverflowError):
            pass
        else:
            return case, []
    return decode_value(data, DecisionCase, file=label)


def _score_gold_numbers(data: Any) -> dict[str, Any]:
    """A row's gold answers that are numbers, of its score questions (a level's value written for its name)."""
    if not isinstance(data, dict) or not isinstance(gold := data.get("gold"), dict) or not isinstance(
            questions := data.get("questions"), dict):
        return {}
    return {name: answer for name, answer in gold.items() if _as_name(answer) is not None
            and isinstance(question := questions.get(name), dict) and question.get("type") == "score"}


_encode = msgspec.json.Encoder().encode


def _items(path: Path, raw: bytes, meta: dict[str, Any]) -> tuple[list[tuple[str, Any]], list[Problem]]:
    """The rows of the file, each with where it is (``file:line`` for JSONL, ``file $.rows[i]`` for JSON)."""
    start = raw.removeprefix(b"\xef\xbb\xbf").lstrip()  # (a byte-order mark is no JSON: read past it)
    if (encoding := other_encoding(raw, str(path))) is not None:  # (once for the file, not once a line)
        return [], [encoding]
    if (path.suffix.lower() == ".jsonl" and not _one_document(start)) or (
            not start.startswith((b"[", b"{")) or _looks_like_jsonl(raw)):
        items: list[tuple[str, Any]] = []
        problems: list[Problem] = []
        for number, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            value, found = parse_json(line, file=f"{path}:{number}")
            problems.extend(_of_the_line(problem) for problem in found)
            if value is not None:
                items.append((f"{path}:{number}", value))
        return items, problems
    data, problems = parse_json(raw, file=str(path))
    if data is None:
        return [], problems
    if isinstance(data, dict):
        unknown = [k for k in data if k not in ("name", "license", "description", "rows")]
        for key in unknown:
            problems.append(Problem(file=str(path), path=f"$.{key}", message=f'unknown field "{key}"',
                                    hint="a corpus object has name, license, description and rows",
                                    code="unknown-field"))
        meta.update({k: data.get(k) for k in ("name", "license", "description") if isinstance(data.get(k), str)})
        rows = data.get("rows")
        if not isinstance(rows, list):
            problems.append(Problem(file=str(path), path="$.rows", message='expected "rows": an array of rows',
                                    code="type"))
            return [], problems
        return [(f"{path} $.rows[{i}]", row) for i, row in enumerate(rows)], problems
    if isinstance(data, list):
        return [(f"{path} $[{i}]", row) for i, row in enumerate(data)], problems
    return [], [*problems, Problem(file=str(path), path="$", message="expected rows: JSONL, a JSON array, or an "
                                   'object with "rows"', code="type")]


def _of_the_line(problem: Problem) -> Problem:
    """A JSONL line's syntax error said of the line, which the problem's file names (``c.jsonl:2``): at its column,
    not at "line 1", and cut off as a line, not as the file."""
    if problem.code != "syntax":
        return problem
    message = re.sub(r"^invalid JSON at line 1, column ", "invalid JSON at column ", problem.message)
    hint = problem.hint and problem.hint.replace("the file ends before", "the line ends before").replace(
        "the file looks cut off", "the line looks cut off")
    return msgspec.structs.replace(problem, message=message, hint=hint)


def _one_document(start: bytes) -> bool:
    """A .jsonl file that holds one JSON array or object written over several lines (indented, as JSON is
    written to be read), not a line a row: read as the JSON it is, not refused a line at a time."""
    first = start.split(b"\n", 1)[0]
    if not start.startswith((b"[", b"{")) or first.strip() == start.strip():
        return False
    try:
        msgspec.json.decode(first)
    except msgspec.DecodeError:
        try:
            return isinstance(msgspec.json.decode(start), list | dict)
        except msgspec.DecodeError:
            return False
    return False


def _looks_like_jsonl(raw: bytes) -> bool:
    """Several lines that each hold a whole JSON object (a .json file written as JSON lines)."""
    lines = [line for line in raw.removeprefix(b"\xef\xbb\xbf").split(b"\n") if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith(b"{"):
        return False
    try:
        msgspec.json.decode(lines[0])
    except msgspec.DecodeError:
        return False
    return True
