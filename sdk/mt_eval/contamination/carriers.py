"""Where the planted control puts a text in the bundle's copy: the places a method keeps its data.

Each carrier writes one text (perturbed already) into the copy, sometimes split across lines or literals,
and returns where it went: the file as the check names it and the first and last line the text occupies.
Python and JavaScript carriers append to one of the bundle's own source files when one parses (and
otherwise write a new one); the others write new files under ``mt-eval-control/``.
"""

from __future__ import annotations

import ast
import csv
import gzip
import io
import json
import random
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mt_eval.contamination.perturb import split_in_two
from mt_eval.lone_surrogates import writable

CONTROL_DIRECTORY = "mt-eval-control"


@dataclass
class Placement:
    file: str
    first_line: int
    last_line: int
    split: bool


@dataclass
class ControlCopy:
    """The bundle's copy being planted, and its own source files that can take an appended literal."""

    root: Path
    rng: random.Random
    python_files: list[Path] = field(default_factory=list)
    javascript_files: list[Path] = field(default_factory=list)

    def new_file(self, name: str) -> tuple[Path, str]:
        relative = f"{CONTROL_DIRECTORY}/{name}"
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        return path, relative

    def relative(self, path: Path) -> str:
        """The file as the check names it (a name that is not UTF-8 with its escapes)."""
        return writable(path.relative_to(self.root).as_posix())


def _parts(copy: ControlCopy, text: str) -> tuple[str, str] | None:
    """The text split in two half the time (when it has a space to split at)."""
    if copy.rng.random() < 0.5:
        return None
    first, second = split_in_two(text)
    return (first, second) if second else None


def _append(path: Path, addition: str) -> int:
    """Append to a file of the copy (never through a link to the original); returns the first new line."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data += b"\n"
    path.unlink()
    path.write_bytes(data + addition.encode("ascii"))
    return data.count(b"\n") + 1


def python_string(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text) or (text,)
    literals = "\n".join(f"    {part!a}" for part in parts)
    addition = f"\nCONTROL_TEXT_{number} = (\n{literals}\n)\n"
    if copy.python_files:
        target = copy.rng.choice(copy.python_files)
        first = _append(target, addition)
        return Placement(copy.relative(target), first + 1, first + 2 + len(parts), len(parts) > 1)
    path, relative = copy.new_file(f"strings_{number}.py")
    path.write_text(addition, encoding="utf-8")
    return Placement(relative, 2, 3 + len(parts), len(parts) > 1)


def python_triple_quoted(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text) or (text,)
    body = "\n".join(p.replace("\\", "\\\\").replace('"', '\\"') for p in parts)
    path, relative = copy.new_file(f"prompts_{number}.py")
    path.write_text(f'"""Prompt material."""\n\nEXAMPLE = """\n{body}\n"""\n', encoding="utf-8")
    return Placement(relative, 3, 4 + len(parts), len(parts) > 1)


def javascript_string(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text) or (text,)
    literals = " +\n  ".join(json.dumps(part) for part in parts)
    addition = f"\nconst controlText{number} = {literals};\n"
    if copy.javascript_files:
        target = copy.rng.choice(copy.javascript_files)
        first = _append(target, addition)
        return Placement(copy.relative(target), first + 1, first + len(parts), len(parts) > 1)
    path, relative = copy.new_file(f"strings_{number}.js")
    path.write_text(addition, encoding="utf-8")
    return Placement(relative, 2, 1 + len(parts), len(parts) > 1)


def javascript_template(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text) or (text,)
    body = "\n".join(p.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${") for p in parts)
    path, relative = copy.new_file(f"examples_{number}.mjs")
    path.write_text(f"// examples\nexport const example = `{body}`;\n", encoding="utf-8")
    return Placement(relative, 2, 1 + len(parts), len(parts) > 1)


def json_glossary(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text)
    value: str | list[str] = list(parts) if parts else text
    document = json.dumps({"glossary": [{"term": "control", "translation": value}]}, indent=2)
    path, relative = copy.new_file(f"glossary_{number}.json")
    path.write_text(document + "\n", encoding="utf-8")
    first = document[:document.index('"translation"')].count("\n") + 1
    return Placement(relative, first, first + (3 if parts else 0), parts is not None)


def json_lines(copy: ControlCopy, text: str, number: int) -> Placement:
    path, relative = copy.new_file(f"examples_{number}.jsonl")
    lines = [json.dumps({"id": 1, "text": "control example"}), json.dumps({"id": 2, "text": text})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Placement(relative, 2, 2, False)


def _lines_file(copy: ControlCopy, text: str, name: str, header: list[str], first: str, then: str) -> Placement:
    """A text file: ``header`` lines, then the text (maybe split) on lines starting ``first``, ``then``…"""
    parts = _parts(copy, text) or (text,)
    path, relative = copy.new_file(name)
    lines = [*header, first + parts[0], *(then + part for part in parts[1:])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Placement(relative, len(header) + 1, len(header) + len(parts), len(parts) > 1)


def tsv_glossary(copy: ControlCopy, text: str, number: int) -> Placement:
    return _lines_file(copy, text, f"glossary_{number}.tsv", ["term\ttranslation"], "control\t", "\t")


def csv_rows(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text)
    cell = "\n".join(parts) if parts else text
    buffer = io.StringIO()
    csv.writer(buffer).writerows([["id", "text"], [number, cell]])
    path, relative = copy.new_file(f"data_{number}.csv")
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return Placement(relative, 2, 2 + cell.count("\n"), parts is not None)


def prompt_text(copy: ControlCopy, text: str, number: int) -> Placement:
    return _lines_file(copy, text, f"prompt_{number}.txt", ["You are a careful translator.", "Example:"], "", "")


def markdown(copy: ControlCopy, text: str, number: int) -> Placement:
    return _lines_file(copy, text, f"NOTES_{number}.md", ["# Notes", ""], "> ", "> ")


def gzip_text(copy: ControlCopy, text: str, number: int) -> Placement:
    path, relative = copy.new_file(f"corpus_{number}.txt.gz")
    path.write_bytes(gzip.compress(f"notes\n{text}\n".encode()))
    return Placement(relative, 2, 2, False)


def zip_member(copy: ControlCopy, text: str, number: int) -> Placement:
    parts = _parts(copy, text) or (text,)
    path, relative = copy.new_file(f"resources_{number}.zip")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/examples.txt", "examples\n" + "\n".join(parts) + "\n")
    return Placement(f"{relative}:data/examples.txt", 2, 1 + len(parts), len(parts) > 1)


def tar_member(copy: ControlCopy, text: str, number: int) -> Placement:
    path, relative = copy.new_file(f"assets_{number}.tar.gz")
    data = f"term\ttranslation\ncontrol\t{text}\n".encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("assets/glossary.tsv")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return Placement(f"{relative}:assets/glossary.tsv", 2, 2, False)


Carrier = Callable[[ControlCopy, str, int], Placement]
CARRIERS: dict[str, Carrier] = {
    "python string": python_string, "python triple-quoted string": python_triple_quoted,
    "javascript string": javascript_string, "javascript template literal": javascript_template,
    "json glossary": json_glossary, "json lines": json_lines, "tsv glossary": tsv_glossary, "csv": csv_rows,
    "prompt text": prompt_text, "markdown": markdown, "gzip text": gzip_text, "zip member": zip_member,
    "tar.gz member": tar_member,
}


def parses_as_python(path: Path, limit: int) -> bool:
    try:
        if path.stat().st_size > limit:
            return False
        ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # (the last two: nested too deeply)
        return False
    return True


def parses_as_javascript(path: Path, limit: int) -> bool:
    from mt_eval.contamination.code_strings import javascript_pieces

    try:
        return path.stat().st_size <= limit and javascript_pieces(path.read_bytes(), path.suffix)[0] is not None
    except OSError:
        return False
