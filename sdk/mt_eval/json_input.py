"""Reading a user's JSON file: syntax errors with line and column, invalid UTF-8 (UTF-16 or UTF-32 named as such),
duplicate keys.

Numbers are read as JavaScript reads them (``3.0`` is the integer 3; integers beyond 2^53 are doubles), so
a document means the same to the Python and the Node validators; or, for a file whose numbers are copied
rather than used (champollion's locale files), as `JsonNumber`s holding each number as written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from mt_eval.js_text import SAFE_INTEGER
from mt_eval.problems import Problem, json_path

MAX_DEPTH = 500  # arrays and objects nested deeper are refused, at the same depth as Node's reader (json-text.js)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def js_int(text: str) -> int | float:
    if len(text) > 17:  # (past every safe integer, 16 digits and a sign: a double, whose int() could be refused)
        return float(text)  # (over 308 digits: infinity, as JavaScript reads it)
    value = int(text)
    return value if abs(value) <= SAFE_INTEGER else float(text)


def js_float(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and abs(value) <= SAFE_INTEGER else value


class _TooLarge(float):
    """A number past every double while it is read: ±Infinity, as JavaScript reads it, with its text."""

    text: str


def _marking_too_large(read: Callable[[str], int | float], count: list[int]) -> Callable[[str], int | float]:
    def marked(text: str) -> int | float:
        value = read(text)
        if not (isinstance(value, float) and math.isinf(value)):
            return value
        count[0] += 1
        found = _TooLarge(value)
        found.text = text
        return found

    return marked


def _unmark(value: Any, at: tuple[str | int, ...], written: dict[tuple[str | int, ...], str]) -> Any:
    """``value`` with each number past every double made a plain ±Infinity again, its text kept by path."""
    if isinstance(value, _TooLarge):
        written[at] = value.text
        return float(value)
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = _unmark(item, (*at, key), written)
    elif isinstance(value, list):
        value[:] = [_unmark(item, (*at, index), written) for index, item in enumerate(value)]
    return value


# Byte-order marks of the encodings a JSON file is sometimes saved in instead of UTF-8 (UTF-32's first: UTF-32LE's
# begins with UTF-16LE's). Node's reader (json-text.js) knows the same.
_OTHER_ENCODINGS = ((b"\xff\xfe\0\0", "UTF-32"), (b"\0\0\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
                    (b"\xfe\xff", "UTF-16"))
# Without a byte-order mark: JSON text starts with two ASCII characters, so which of its first four bytes are NUL
# says the encoding (RFC 4627, section 3); in UTF-8 none is.
_BY_NUL_BYTES: dict[tuple[bool, ...], str] = {
    (True, True, True, False): "UTF-32BE", (False, True, True, True): "UTF-32LE",
    (True, False, True, False): "UTF-16BE", (False, True, False, True): "UTF-16LE"}


def other_encoding(data: bytes, file: str) -> Problem | None:
    """A `Problem` when ``data`` is UTF-16 or UTF-32 (a file saved as "Unicode"): it starts with the byte-order mark
    of one, or without one, with the NUL bytes of ASCII in one. It names the encoding and how to convert the file;
    else None."""
    for mark, encoding in _OTHER_ENCODINGS:
        if data.startswith(mark):
            return _encoding_problem(file, encoding, f"it starts with the byte-order mark {mark.hex(' ').upper()}")
    unmarked = _BY_NUL_BYTES.get(tuple(byte == 0 for byte in data[:4])) if len(data) >= 4 else None
    if unmarked is not None:
        return _encoding_problem(file, unmarked, f"it starts with {data[:4].hex(' ').upper()}, ASCII in {unmarked} "
                                 "without a byte-order mark")
    return None


def _encoding_problem(file: str, encoding: str, evidence: str) -> Problem:
    import shlex

    name = shlex.quote(file) if file else "FILE"
    converted = shlex.quote(f"{file}.utf8") if file else "FILE.utf8"
    return Problem(file=file, path="$", message=f"{encoding} text, not UTF-8 ({evidence})", code="encoding",
                   hint=f"save it as UTF-8, e.g. iconv -f {encoding} -t UTF-8 {name} > {converted} && "
                   f"mv {converted} {name}")


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """Where ``data`` stops being UTF-8, in words: ``not valid UTF-8: byte 0xe9 at line 2 (offset 47)``."""
    line = data[: exc.start].count(b"\n") + 1
    return f"not valid UTF-8: byte 0x{data[exc.start]:02x} at line {line} (offset {exc.start})"


def too_large_words(text: str) -> str:
    """A number past every double as written, its first digits only when it is long (Node: ``tooLarge``)."""
    if len(text) <= 24:
        return f"a number too large to hold: {text}"
    body = text.lstrip("-")
    return f"a number too large to hold: {text[:20]}… ({len(body):,} {'digits' if body.isdigit() else 'characters'})"


@dataclass(frozen=True)
class TooManyDigits:
    """An integer written with more digits than Python turns into an int (``sys.get_int_max_str_digits()``, 4,300
    by default; ``int()`` raises ValueError), read as this by `int_or_too_long` so a reader can say where it is."""

    digits: int
    HINT: ClassVar[str] = "write it as a string, in double quotes, or remove it"

    @property
    def message(self) -> str:
        import sys

        return f"holds an integer of {self.digits:,} digits, more than can be read ({sys.get_int_max_str_digits():,} " \
               "at most)"


def int_or_too_long(text: str) -> int | TooManyDigits:
    """``parse_int`` for ``json.loads``: the integer, or `TooManyDigits` where ``int()`` refuses it."""
    try:
        return int(text)
    except ValueError:
        return TooManyDigits(len(text.lstrip("-")))


def too_many_digits(exc: ValueError) -> str | None:
    """Why ``json.loads`` refused a text when it holds an integer of more digits than ``int()`` reads (which is
    JSON, so "not JSON" would be wrong): what it is and the fix, not Python's advice to raise its limit; else None."""
    found = re.match(r"Exceeds the limit \(\d+ digits\).*value has (\d+) digits", str(exc))
    return None if found is None else f"{TooManyDigits(int(found.group(1))).message}: {TooManyDigits.HINT}"


@dataclass(frozen=True)
class JsonNumber:
    """A number exactly as the file writes it (``1.50``, ``-0``, ``12345678901234567890``): its JSON token,
    which a writer copies as it is. Node's reader (``lib/json-text.js``) has the same class."""

    text: str


def parse_json(raw: bytes, *, file: str, exact_numbers: bool = False,
               too_large: dict[tuple[str | int, ...], str] | None = None) -> tuple[Any, list[Problem]]:
    """Parse JSON text; problems name the line and column, invalid UTF-8 and duplicate keys. With
    ``exact_numbers``, each number is a `JsonNumber` (``NaN`` and ``Infinity``, not JSON, stay floats). Into
    ``too_large`` go the numbers past every double (read as ±Infinity) as written, by path, for problems to
    say what was written ("1e400", an integer of 5,000 digits) rather than "Infinity"."""
    if (encoding := other_encoding(raw, file)) is not None:
        return None, [encoding]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [
            Problem(
                file=file,
                path="$",
                message=not_utf8(raw, exc),
                hint="save the file as UTF-8",
                code="encoding",
            )
        ]
    noted = KeysWrittenTwice()
    depth = _nesting_depth(text) if text.count("{") + text.count("[") > MAX_DEPTH else 0
    if depth > MAX_DEPTH:  # (refused before it is read: Python's own limit depends on how deep its stack already is)
        return None, [
            Problem(
                file=file,
                path="$",
                message=f"arrays and objects nested {depth:,} levels deep: too deep to read",
                hint=f"nothing this file holds nests over {MAX_DEPTH} levels deep; regenerate it, or check what wrote "
                "it",
                code="syntax",
            )
        ]
    try:
        number = JsonNumber if exact_numbers else None
        marked = [0]
        read_int, read_float = (js_int, js_float) if too_large is None else (
            _marking_too_large(js_int, marked), _marking_too_large(js_float, marked))
        value = json.loads(text, object_pairs_hook=noted.pairs_hook, parse_int=number or read_int,
                           parse_float=number or read_float)
        if marked[0] and too_large is not None:
            value = _unmark(value, (), too_large)
    except json.JSONDecodeError as error:
        syntax = same_on_every_python(error)
        return None, [
            Problem(
                file=file,
                path="$",
                message=f"invalid JSON at line {syntax.lineno}, column {syntax.colno}: {syntax_detail(syntax.msg)}",
                hint=_syntax_hint(syntax),
                code="syntax",
            )
        ]
    problems = [
        Problem(
            file=file,
            path=path,
            message=f'key "{key}" appears more than once in an object',
            hint="keep one of them; JSON readers silently drop all but the last",
            code="duplicate-key",
        )
        for path, key in noted.located(value)
    ]
    return value, problems


class KeysWrittenTwice:
    """The keys written twice in JSON objects, noted by `pairs_hook` (``json.loads``'s ``object_pairs_hook``; the
    last value kept, as JSON readers do), and where each is once the text is read (`located`)."""

    def __init__(self) -> None:
        self.duplicates: list[tuple[dict[str, Any], str]] = []  # (an object, a key it writes twice), inner first
        self.dropped: dict[int, list[tuple[str, Any]]] = {}  # an object's values a repeated key replaced, by its id

    def pairs_hook(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                self.duplicates.append((out, key))
                self.dropped.setdefault(id(out), []).append((key, out[key]))
            out[key] = value
        return out

    def located(self, value: Any) -> list[tuple[str, str]]:
        """Each key written twice, with the JSON path of its object in ``value`` (what `json.loads` returned),
        once per path and key, inner objects first."""
        if not self.duplicates:
            return []
        where = _paths_of({id(held) for held, _ in self.duplicates}, value, self.dropped)
        return list(dict.fromkeys((where[id(held)], key) for held, key in self.duplicates))


def _paths_of(wanted: set[int], value: Any, dropped: dict[int, list[tuple[str, Any]]]) -> dict[int, str]:
    """The JSON path of each object in ``value`` whose id is ``wanted`` (found again only when a key was repeated:
    ``object_pairs_hook`` is not told where an object is), also inside the values a repeated key replaced."""
    found: dict[int, str] = {}
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack and len(found) < len(wanted):
        item, at = stack.pop()
        if isinstance(item, dict):
            if id(item) in wanted:
                found[id(item)] = json_path(at)
            stack.extend(((inner, (*at, key)) for key, inner in [*item.items(), *dropped.get(id(item), [])]
                          if isinstance(inner, dict | list)))
        elif isinstance(item, list):
            stack.extend((inner, (*at, index)) for index, inner in enumerate(item) if isinstance(inner, dict | list))
    return found


def same_on_every_python(exc: json.JSONDecodeError) -> json.JSONDecodeError:
    """The error as Python 3.11 and 3.12 (and the Node side, ``lib/json-text.js``) report it. Python 3.13 names a
    trailing comma itself, at the comma ("Illegal trailing comma before end of object"); earlier versions, and the
    shared test vectors, report what the closing brace or bracket after it should have been, at that character."""
    if not exc.msg.startswith("Illegal trailing comma before end of "):
        return exc
    closing = exc.pos + 1
    while closing < len(exc.doc) and exc.doc[closing] in " \t\n\r":
        closing += 1
    expected = "Expecting property name enclosed in double quotes" if exc.msg.endswith("object") else "Expecting value"
    return json.JSONDecodeError(expected, exc.doc, closing)


def syntax_detail(message: str) -> str:
    """Python's wording of a syntax error without its dangling "at" ("Unterminated string starting at"): the
    position precedes it ("invalid JSON at line 3, column 9: Unterminated string")."""
    return re.sub(r" (?:starting )?at$", "", message)


def _syntax_hint(exc: json.JSONDecodeError) -> str:
    """The likely fix. A file cut off (the error at its very end) is named as such, whatever the parser expected
    there, a comment (JSONC's ``//`` or ``/*``) wherever it stands, and a trailing comma only when a closing brace
    or bracket follows it."""
    doc, pos = exc.doc, exc.pos
    if not doc.strip():
        return "the file is empty: it must hold a JSON document"
    if doc.startswith("\0", pos):
        return ("a NUL byte here, which no JSON text has: the file was damaged while it was written (a crash or a full "
                "disk leaves NUL bytes in place of its text); write it again, or restore it from a copy")
    if exc.msg.startswith("Unterminated string"):  # (the scanner reached the end of the file inside the string)
        return "the string that starts here has no closing double quote: the file looks cut off"
    if pos >= len(doc.rstrip()):
        return "the file ends before its JSON does: it looks cut off (an object or list is not closed)"
    if doc.startswith(("//", "/*"), pos):
        return "JSON has no comments: remove the comment that starts here"
    before = doc[:pos].rstrip()
    if exc.msg.startswith("Expecting property name") and before.endswith(",") and doc[pos] == "}":
        return "remove the trailing comma before the closing brace"
    if exc.msg.startswith("Expecting value") and before.endswith(",") and doc[pos] == "]":
        return "remove the trailing comma before the closing bracket"
    if exc.msg.startswith("Expecting ',' delimiter"):
        return "add a comma between the two items"
    if "double quotes" in exc.msg:
        return "JSON needs double quotes around keys and strings"
    if exc.msg.startswith("Invalid control character"):
        return r"write a tab or line break inside a string as \t or \n"
    if exc.msg.startswith("Extra data"):
        return "remove what follows the end of the JSON document (a file holds one document)"
    return "fix the JSON syntax at that position"


def _nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in ``text`` (brackets inside strings are not counted)."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest
