"""``mt-eval grade export|import``: blinded grading by people, through sheets.

``export`` writes, for one run card, a sheet of anonymous shuffled items (``sheet.csv`` and/or
``sheet.jsonl``), the rubric for the graders (``rubric.md``) and ``key.json``, which maps items back to entries and
stays with whoever runs the grading. ``import`` reads filled sheets (one per grader; several are averaged per
item), checks every answer against the rubric — each problem names the sheet's line, the item and the
question — and writes a grading card as ``mt-eval grade`` does.

CSV sheets have the columns ``item, source_lang, target_lang, source, candidate[, reference], <question>,
comment``; a grader writes a level's label in the question's column. JSONL sheets hold ``{"item", "state",
"question", "answer"}``; ``answer`` is a level's label or a distribution ``{label: probability}``.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.decisions import grading_card as gc
from mt_eval.decisions.answers import check_answer
from mt_eval.decisions.blinding import Blinded, GradingError, blind
from mt_eval.decisions.corpus import gold_distribution
from mt_eval.decisions.grading import choose_seed, finish, load_run
from mt_eval.decisions.json_lines import read_line
from mt_eval.decisions.records import DecisionResult, Question, finite, number_text
from mt_eval.decisions.request import GradeRequest
from mt_eval.decisions.rubric import SHEET_COLUMNS, Rubric, read_rubric, rubric_sha256, rubric_text
from mt_eval.harness.session import now
from mt_eval.json_input import not_utf8

KEY_VERSION = "grading-key/1"
EXPORTED = ("sheet.csv", "sheet.jsonl", "rubric.md", "key.json")  # what an export writes


class GradingKey(msgspec.Struct, kw_only=True):
    """``key.json``: which entry each item is. Keep it away from the graders."""

    key_version: str = KEY_VERSION
    run_id: str
    card_content_sha256: str
    rubric: Rubric
    rubric_sha256: str  # (of the rubric's file, which the grading card names)
    seed: int
    with_reference: bool
    items: dict[str, str]
    rubric_content_sha256: str | None = None  # (of ``rubric`` as held here, so an edit is refused; older keys lack it)


def export_sheets(request: GradeRequest) -> Path:
    """Write the sheets, the rubric and the key for people to grade a run; the output directory."""
    card, _raw, entries = load_run(request)
    rubric, rubric_sha = read_rubric(request.rubric)
    blinded = blind(card, entries, rubric, seed=choose_seed(request.seed), with_reference=request.with_reference)
    assert request.out is not None
    out = request.out
    if out.exists() and not out.is_dir():
        raise GradingError(f"--out {out} is a file, not a directory: give a new directory for the sheets")
    earlier = [name for name in EXPORTED if (out / name).exists()]
    if earlier and not request.force:
        raise GradingError(f"{out} already holds {', '.join(earlier)} of an earlier export: graders may be filling "
                           "its sheets in, and its key.json is the only way from their items back to the entries. "
                           "Choose another --out, or give --force to replace them")
    for name in earlier:  # (--force: nothing of the earlier export is left beside the new key)
        (out / name).unlink()
    files: dict[str, bytes] = {}  # (each written whole, and none kept unless all are: a sheet without its key is lost)
    columns = ["item", "source_lang", "target_lang", "source", "candidate"]
    columns += ["reference"] if blinded.with_reference else []
    if request.format in ("csv", "both"):
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=[*columns, rubric.name, "comment"], lineterminator="\n")
        writer.writeheader()
        for item in blinded.items:
            writer.writerow({"item": item.item_id, **{c: item.case.state.get(c, "") for c in columns[1:]},
                             rubric.name: "", "comment": ""})
        files["sheet.csv"] = buffer.getvalue().encode("utf-8")
    if request.format in ("jsonl", "both"):
        question = msgspec.to_builtins(rubric.question())
        lines = [json.dumps({"item": item.item_id, "state": item.case.state, "question": {rubric.name: question},
                             "answer": None}, ensure_ascii=False) for item in blinded.items]
        files["sheet.jsonl"] = ("\n".join(lines) + "\n").encode("utf-8")
    files["rubric.md"] = rubric_text(rubric, request.format).encode("utf-8")
    key = GradingKey(run_id=card.run_id, card_content_sha256=card.content_sha256, rubric=rubric,
                     rubric_sha256=rubric_sha, seed=blinded.seed, with_reference=blinded.with_reference,
                     items={item.item_id: item.entry_id for item in blinded.items},
                     rubric_content_sha256=rubric_sha256(rubric))
    files["key.json"] = msgspec.json.format(msgspec.json.encode(key), indent=2) + b"\n"
    _write_all(out, files)
    return out


def _write_all(out: Path, files: dict[str, bytes]) -> None:
    """Write every file of an export into ``out``, or none: one that cannot be written (a full disk) takes those
    written before it away, so that no sheet is left without its key, nor a part of one taken for an export."""
    from mt_eval.atomic_files import directory_for, write_atomically

    written: list[Path] = []
    try:
        with directory_for(out):  # (one made for the export is not left behind empty)
            try:
                for name, content in files.items():
                    write_atomically(out / name, content)
                    written.append(out / name)
            except OSError:
                for path in written:
                    path.unlink(missing_ok=True)
                raise
    except OSError as exc:
        raise GradingError(f"cannot write the sheets in {out}: {exc.strerror or exc}; nothing of this export was "
                           "kept. Free space, or make the directory writable, and export again") from exc


def read_key(path: str | Path) -> GradingKey:
    try:
        data = msgspec.json.decode(Path(path).read_bytes())
        version = data.get("key_version", KEY_VERSION) if isinstance(data, dict) else KEY_VERSION
        if version != KEY_VERSION:  # (its items may map to entries another way)
            from mt_eval._version import __version__
            from mt_eval.value_words import value_in_words

            shown = repr(version) if isinstance(version, str) and len(version) <= 40 else value_in_words(version)
            raise GradingError(f"{path}: this key's version is {shown}; mt-eval {__version__} reads {KEY_VERSION!r}: "
                               "import the sheets with the mt-eval version that exported them")
        key = msgspec.convert(data, GradingKey)
    except OSError as exc:
        raise GradingError(f"cannot read the key {path}: {exc.strerror or exc}") from exc
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise GradingError(f"{path} is not a key written by `mt-eval grade export`: {exc}") from exc
    if key.rubric_content_sha256 not in (None, rubric_sha256(key.rubric)):  # (else the edited rubric grades unsaid)
        raise GradingError(f"{path} does not verify: its rubric was changed after `mt-eval grade export` wrote it (it "
                           "no longer hashes to its rubric_content_sha256), and the sheets were answered on the rubric "
                           "exported: import with the key.json as export wrote it (to grade on another rubric, export "
                           "again with --rubric FILE)")
    return key


SHOWN = ("source", "candidate", "reference")  # what a sheet shows of an item, compared with the export's


def _answers_in(path: Path, data: bytes, question: Question, name: str, items: dict[str, dict[str, Any]],
                with_reference: bool = False) -> tuple[dict[str, list[float]], list[str]]:
    """The answered items of one sheet (its bytes: item → distribution) and every problem found in it. ``items``
    is what the export showed of each item: a row that shows other texts belongs to another export, and a sheet
    that shows the texts but no reference, when the key says its export showed them (``with_reference``), to a
    --no-reference one."""
    try:  # UTF-8, or the UTF-16 with its byte order mark a spreadsheet's "Unicode text" is saved in
        text = data.decode("utf-16") if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) \
            else data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return {}, [f"{path}: not valid UTF-16 (it starts as UTF-16 does), at byte {exc.start}: save the sheet as "
                        "UTF-8 (a spreadsheet's \"CSV UTF-8\")"]
        return {}, [f"{path}: {not_utf8(data, exc)}: save the sheet as UTF-8 (a spreadsheet's \"CSV UTF-8\")"]
    rows, problems = _csv_rows(path, text, name) if path.suffix.lower() == ".csv" else _jsonl_rows(path, text)
    # (a sheet of answers alone, its texts dropped by a tool that writes only items and answers, cannot tell)
    showing = [shown for _, item, _, shown in rows if _text(items.get(str(item).strip(), {}).get("reference"))
               and any(_text(shown.get(field)) for field in ("source", "candidate"))]
    if with_reference and showing and not any(_text(shown.get("reference")) for shown in showing):
        return {}, [*problems, f"{path}: no reference on this sheet, but its key was exported with references: the "
                    "grading card would say the graders saw them. Is it a sheet of a --no-reference export? Import "
                    "it with the key.json exported beside it (a reference column a grader removed or emptied: put "
                    "it back)"]
    found: dict[str, list[float]] = {}
    answered_at: dict[str, str] = {}  # item → the line that answered it first
    strangers: list[str] = []
    for where, item, answer, shown in rows:
        item = item.strip() if isinstance(item, str) else item
        if not isinstance(item, str) or item not in items:
            problems.append(f"{where}: item {json.dumps(item)} is not in the key: is this a sheet of this export?")
            continue
        if other := _shown_otherwise(shown, items[item]):
            strangers.append(f"{where}: item {item} shows another {other} than this export's item {item}")
            continue
        if isinstance(answer, str):
            answer = _written_level(answer.strip(), question.option_names) or None  # (empty: not answered)
        if answer is None:
            continue
        answer = _level_name(answer)
        distribution, problem = gold_distribution(question, answer, called="the answer")
        if problem is not None:
            problems.append(f'{where}: row {item}, question "{name}": {problem}')
        elif item in found:
            problems.append(f"{where}: row {item} is answered twice in this sheet (first on line {answered_at[item]}): "
                            "keep one of the two rows")
        else:
            assert distribution is not None
            found[item], answered_at[item] = distribution, where.rpartition(":")[2]
    if strangers:
        more = f" (and {len(strangers) - 1} more rows)" if len(strangers) > 1 else ""
        problems.append(f"{strangers[0]}{more}: this sheet comes from another export (another card, seed, rubric or "
                        "--no-reference), or was edited; import it with the key.json exported beside it, its texts "
                        "and question as the export wrote them")
    return found, problems


Row = tuple[str, Any, Any, dict[str, Any]]  # (where, item, answer, what the row shows)


def _csv_rows(path: Path, text: str, name: str) -> tuple[list[Row], list[str]]:
    """The rows of a CSV sheet, read strictly: a quote opened in a cell and never closed would otherwise take
    the following lines into that cell, and their answers would be lost without a word."""
    delimiter = _delimiter(text, name)
    # (newline="": the reader ends a row at a CR too, as the CSV a Mac spreadsheet saves has only CRs)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, delimiter=delimiter)
    rows: list[Row] = []
    problems: list[str] = []
    start = 1
    try:
        header = next(reader, None)
        header = None if header is None else _column_names(header, name)
        if header is None or "item" not in header or name not in header:
            found = ", ".join(json.dumps(column) for column in header or [] if column.strip()) or "no column"
            return [], [f'{path}: a sheet has the columns "item" and "{name}" (as `mt-eval grade export` wrote it); '
                        f"its first line has {found}"]
        repeated = sorted({column for column in header if column.strip() and header.count(column) > 1})
        if repeated:
            return [], [f'{path}:1: the column "{repeated[0]}" appears more than once in the header: keep one of '
                        "them (the one holding the answers)"]
        start = reader.line_num + 1
        for cells in reader:
            where, start = f"{path}:{start}", reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue  # (a row left empty, as spreadsheets save one)
            if len(cells) != len(header):
                problems.append(f"{where}: {len(cells)} cells where the header has {len(header)}: a cell that "
                                "holds a comma or a quote is written in quotes, its own quotes doubled (\"\")")
                continue
            record = dict(zip(header, cells, strict=True))
            rows.append((where, record["item"], record[name], {f: record[f] for f in SHOWN if f in record}))
    except csv.Error as exc:
        return [], [f"{path}:{start}: the row starting here cannot be read as CSV ({exc}): is a quote opened in "
                    "a cell and never closed? It takes in the lines after it. A quote inside a cell is written doubled "
                    "(\"\")"]
    return rows, problems


def _delimiter(text: str, name: str) -> str:
    """The sheet's delimiter: the comma `mt-eval grade export` writes, else the semicolon or TAB a spreadsheet saves
    with in many locales, when its header names the columns with it."""
    first = re.split(r"\r\n?|\n", text, maxsplit=1)[0]
    for delimiter in (",", ";", "\t"):
        header = _column_names(next(csv.reader([first], delimiter=delimiter), []), name)
        if "item" in header and name in header:
            return delimiter
    return ","


def _column_names(header: list[str], name: str) -> list[str]:
    """The header's columns as the export named them: a column a grader retyped as "Item" or " Adequacy " is the
    column "item" or "adequacy" (any other column is kept as it is, and ignored)."""
    exported = {column.casefold(): column for column in (*SHEET_COLUMNS, name)}
    return [exported.get(column.strip().casefold(), column) for column in header]


def _written_level(answer: str, options: list[str]) -> str:
    """A level written as a spreadsheet may save its number ("3.0", "3,0" in many locales, "4.00") as the level it
    names exactly, as a JSON number does ("3.5" names none); any other answer as it is."""
    if answer in options or not re.fullmatch(r"-?[0-9]+(?:[.,][0-9]+)?", answer):
        return answer
    named = _level_name(float(answer.replace(",", ".")))
    return named if named in options else answer


def _jsonl_rows(path: Path, text: str) -> tuple[list[Row], list[str]]:
    """The rows of a JSONL sheet: the answer is under "answer"; what a row shows, its "state" and its "question"."""
    rows: list[Row] = []
    problems: list[str] = []
    keyless: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record, problem = read_line(line, f"{path}:{number}", 'a sheet\'s line is {"item", "answer", ...}')
        if problem is not None:
            problems.append(problem)
            continue
        if not isinstance(record, dict):
            problems.append(f'{path}:{number}: expected {{"item", "answer", ...}}')
            continue
        if "answer" not in record:  # (the export writes one on every line: a key renamed would lose every answer)
            keyless.append((number, record))
            continue
        state = record.get("state")
        rows.append((f"{path}:{number}", record.get("item"), record.get("answer"),
                     {**(state if isinstance(state, dict) else {}), "question": record.get("question")}))
    if keyless:
        (number, record), more = keyless[0], f" (and {len(keyless) - 1} more lines)" if len(keyless) > 1 else ""
        keys = ", ".join(json.dumps(key, ensure_ascii=False) for key in record) or "no key"
        problems.append(f'{path}:{number}: no "answer" on this line (it has {keys}){more}: write each answer under '
                        '"answer", as the export named it (null or "" leaves the item unanswered)')
    if not rows and problems and text.lstrip().startswith(("item,", "item\t", "item;")):
        return [], [f"{path}: a table, not JSONL: a sheet is read as CSV only when its name ends in .csv (rename it "
                    "to .csv)"]
    return rows, problems


def _level_name(answer: Any) -> Any:
    """A JSON number as the level name it writes ("4" for 4 or 4.0); any other number as its text, which names no
    level (3.9999999 is not 4), and anything else as it is."""
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        return answer
    if isinstance(answer, int):
        return str(answer)
    if not finite(answer):
        return json.dumps(answer)
    text = number_text(answer)
    return text if float(text) == answer else repr(answer)


def _shown_otherwise(shown: dict[str, Any], exported: dict[str, Any]) -> str | None:
    """The first text a sheet's row shows other than the export showed of its item (a column a grader
    removed or left empty is not compared), or "question" for a JSONL row asking another question; or None."""
    for field in SHOWN:
        given = _text(shown.get(field))
        if given and given != _text(exported.get(field)):
            return field
    asked = shown.get("question")  # (a CSV sheet asks by its column's name, which its header must have)
    return "question" if asked is not None and asked != exported["question"] else None


def _text(value: Any) -> str:
    """A text a sheet shows, as compared with the export's: its line ends and the spaces at its ends aside."""
    return "" if value is None else str(value).replace("\r\n", "\n").strip()


def import_sheets(request: GradeRequest) -> Path:
    """Map filled sheets back to the run's entries and write the grading card; its path."""
    started_at = now()
    assert request.key is not None
    key = read_key(request.key)
    card, raw, entries = load_run(request)
    if key.card_content_sha256 != card.content_sha256:
        raise GradingError(f"{request.key} was written for run {key.run_id}, not for {request.card} (run "
                           f"{card.run_id}): import with the key.json exported beside the sheets, and the run card "
                           "they were exported from")
    rubric = key.rubric
    from mt_eval.decisions.grading import grading_out

    grading_out(request, None)  # (before the sheets are read)
    blinded = blind(card, entries, rubric, seed=key.seed, with_reference=key.with_reference)
    if {item.item_id: item.entry_id for item in blinded.items} != key.items:
        raise GradingError(f"the run's entries no longer match {request.key}: the card or its corpus changed since "
                           "the sheets were exported")
    question = rubric.question()
    totals: dict[str, list[list[float]]] = {}
    sheets: list[gc.Sheet] = []
    problems: list[str] = []
    asked = {rubric.name: msgspec.to_builtins(question)}  # (as the export wrote it on each JSONL line)
    exported = {item.item_id: {**item.case.state, "question": asked} for item in blinded.items}
    seen_paths: set[Path] = set()
    seen_contents: dict[str, Path] = {}  # sha256 → the sheet first given with those bytes
    for path in request.sheets:
        if path.resolve() in seen_paths:
            problems.append(f"{path}: given twice: each grader's sheet counts once")
            continue
        seen_paths.add(path.resolve())
        try:
            data = path.read_bytes()  # (once: what is hashed is what is read)
        except OSError as exc:
            problems.append(f"{path}: cannot read it: {exc.strerror or exc}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen_contents:
            problems.append(f"{path}: a copy of {seen_contents[digest]} (the same bytes): each grader's sheet counts "
                            "once. If two graders truly answered alike, tell their sheets apart with a comment")
            continue
        seen_contents[digest] = path
        answers, found = _answers_in(path, data, question, rubric.name, exported, key.with_reference)
        problems.extend(found)
        for item, distribution in answers.items():
            totals.setdefault(item, []).append(distribution)
        if not found:
            sheets.append(gc.Sheet(path=str(path), sha256=digest, answered=len(answers)))
    if problems:
        raise GradingError("the sheets cannot be imported:\n  " + "\n  ".join(problems))
    grades = {key.items[item]: _averaged(item, question, rubric.name, given) for item, given in totals.items()}
    return finish(request, started_at, card, raw, rubric, key.rubric_sha256, Blinded(
        items=blinded.items, not_graded=blinded.not_graded, identity=blinded.identity, seed=key.seed,
        with_reference=key.with_reference, controls=blinded.controls), grades, human=gc.HumanGraders(sheets=sheets),
        tolerance=1e-3)


def _averaged(item: str, question: Question, name: str, given: list[list[float]]) -> DecisionResult:
    """The graders' answers for one item, averaged (one grader: that grader's answer)."""
    options = question.option_names
    mean = [sum(d[i] for d in given) / len(given) for i in range(len(options))]
    answer = check_answer(question, {"probabilities": dict(zip(options, mean, strict=True))})
    return DecisionResult(id=item, answers={name: answer}, metadata={"graders": len(given)})
