"""Strict decoding of user-written JSON into msgspec Structs, reporting every problem at once.

msgspec stops at the first error. Users deserve the whole list, so decoding happens in three steps:

1. parse the JSON (syntax errors with line and column, duplicate keys);
2. walk the parsed value against the Struct's own type information (``msgspec.inspect``), so the
   Structs stay the single source of truth: unknown fields (with the closest known name), missing
   fields, wrong types, values outside a ``Literal``, pattern and range constraints;
3. build every Struct whose part of the document is type-clean and run its cross-field rules
   (`StrictStruct.findings`), each finding located by its JSON path.

Structs built directly in code run the same rules in ``__post_init__`` and raise on the first call.
"""

from __future__ import annotations

import contextvars
import difflib
import math
import operator
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from mt_eval import field_words as words
from mt_eval.js_text import INEXACT_INTEGER, SAFE_INTEGER, beyond_exact_integers, js_number, js_string
from mt_eval.json_input import parse_json, too_large_words
from mt_eval.lone_surrogates import LONE_SURROGATE_HINT, first_lone, not_valid_unicode, without_lone_keys, writable
from mt_eval.problems import Finding, Problem, ProblemsError, Severity, json_path, problems_at
from mt_eval.value_words import value_in_words

T = TypeVar("T")
At = tuple[str | int, ...]  # where a value is in a document: its keys and indexes, from the top

__all__ = ["StrictStruct", "decode_json", "decode_json_file", "decode_value", "parse_json", "read_json_file"]

_RANGE_TESTS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_rules_deferred = contextvars.ContextVar("_rules_deferred", default=False)


class StrictStruct(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Base for user-facing Structs: unknown fields are errors and cross-field rules always run.

    A subclass declared with ``forbid_unknown_fields=False`` accepts unknown fields; with the class
    attribute ``unknown_fields_are = "warning"`` each one is reported as a warning.
    """

    def findings(self) -> Iterator[Finding]:
        """Cross-field rule violations of this object (not of the objects it contains)."""
        return iter(())

    def __post_init__(self) -> None:
        if _rules_deferred.get():
            return
        found = [f for f in self.findings() if f.severity == "error"]
        if found:
            name = type(self).__name__
            raise ValueError("; ".join(f"{json_path(f.at).removeprefix('$') or name}: {f.message}" for f in found))


def read_json_file(path: Path, type_: type[T]) -> T:
    """Read and strictly decode a JSON file; raise `ProblemsError` listing every problem."""
    value, problems = decode_json_file(path, type_)
    if value is None or any(p.severity == "error" for p in problems):
        unread = [p for p in problems if p.code == "io"]  # (a file that is not there is not an invalid one)
        if unread:
            raise ProblemsError(unread, summary=f"cannot read {path}")
        raise ProblemsError(problems, summary=f"{path} is not a valid {type_.__name__}")
    return value


def decode_json_file(path: Path, type_: type[T]) -> tuple[T | None, list[Problem]]:
    """Decode a file into the value and every problem found.

    The value is None when the document's shape is wrong; it is built (but must not be trusted)
    when only cross-field rules failed, so later checks can still run and report their problems too.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return None, [Problem(file=str(path), path="$", message=f"cannot read file: {reason}", code="io")]
    return decode_json(raw, type_, file=str(path))


def decode_json(raw: bytes, type_: type[T], *, file: str) -> tuple[T | None, list[Problem]]:
    """Parse and strictly decode JSON text into ``type_`` (a StrictStruct)."""
    too_large: dict[At, str] = {}  # (numbers past every double, as written)
    data, problems = parse_json(raw, file=file, too_large=too_large)
    if problems and data is None:
        return None, problems
    value, more = decode_value(data, type_, file=file, too_large=too_large)
    return value, problems + more


def decode_value(data: Any, type_: type[T], *, file: str, too_large: dict[At, str] | None = None
                 ) -> tuple[T | None, list[Problem]]:
    """Strictly decode an already parsed value (module docstring, `decode_json_file`, `parse_json`'s too_large)."""
    walker = _Walker(file, too_large or {})
    clean = walker.check(data, _type_info(type_), ())
    if clean:
        value = walker.build(data, type_, ())
        return value, walker.problems
    # Still run the rules of every object that is well-typed on its own (e.g. each valid dependency).
    clean_parts = [(at, cls) for at, cls, ok in walker.structs if ok]
    for at, cls in clean_parts:
        if not any(len(other) < len(at) and at[: len(other)] == other for other, _ in clean_parts):
            walker.build(_get(data, at), cls, at)
    return None, walker.problems


_TYPE_INFO: dict[Any, mi.Type] = {}


def _type_info(type_: Any) -> mi.Type:
    """``msgspec.inspect.type_info``, once a type: it takes 0.4–0.8 ms (a manifest, a decision row), and a corpus of
    many rows, or many cards, reads each with the same type."""
    found = _TYPE_INFO.get(type_)
    if found is None:
        found = _TYPE_INFO[type_] = mi.type_info(type_)
    return found


def _get(data: Any, at: At) -> Any:
    for part in at:
        data = data[part]
    return data


def _matches(value: Any, t: mi.Type) -> bool:
    """Whether ``value`` has the JSON shape of ``t`` (constraints aside)."""
    if isinstance(t, mi.Metadata):
        return _matches(value, t.type)
    if isinstance(t, mi.AnyType):
        return True
    if isinstance(t, mi.StrType):
        return isinstance(value, str)
    if isinstance(t, mi.BoolType):
        return isinstance(value, bool)
    if isinstance(t, mi.IntType):
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= SAFE_INTEGER
    if isinstance(t, mi.FloatType):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(t, mi.NoneType):
        return value is None
    if isinstance(t, mi.ListType):
        return isinstance(value, list)
    if isinstance(t, mi.StructType | mi.DictType):
        return isinstance(value, dict)
    if isinstance(t, mi.LiteralType):
        return value in t.values
    if isinstance(t, mi.UnionType):
        return any(_matches(value, x) for x in t.types)
    return True


class _Walker:
    def __init__(self, file: str, too_large: dict[At, str]) -> None:
        self.file = file
        self.too_large = too_large
        self.problems: list[Problem] = []
        self.structs: list[tuple[At, type[Any], bool]] = []

    def build(self, data: Any, type_: type[T], at: At) -> T | None:
        """Convert a type-clean part of the document, then run the rules of every Struct in it."""
        token = _rules_deferred.set(True)
        try:
            try:
                value = msgspec.convert(data, type_)
            except UnicodeEncodeError:  # a key "\ud800" (no field's name: the walker said so) that msgspec cannot read
                value = msgspec.convert(without_lone_keys(data), type_)
        except msgspec.ValidationError as exc:  # a constraint the walker does not know about
            self.add(at, str(exc))
            return None
        finally:
            _rules_deferred.reset(token)
        self.run_rules(value, at)
        return value

    def words(self, value: Any, at: At) -> str:
        written = self.too_large.get(at) if isinstance(value, float) and math.isinf(value) else None
        return value_in_words(value) if written is None else too_large_words(written)

    @staticmethod
    def fix(meta: mi.Metadata | None, instruction: str) -> str:
        """How to fix a value that does not fit: the field's own hint, else ``instruction`` with the field's
        description as context (the Node package words it alike: bridge/node/lib/contract/decode.js)."""
        own = _word(meta, words.HINT) or ((meta.extra or {}).get("hint") if meta is not None else None)
        described = _word(meta, "description")
        return str(own) if own else f"{instruction} ({described})" if described else instruction

    def add(self, at: At, message: str, hint: str | None = None, code: str = "invalid",
            severity: Severity = "error") -> None:
        self.problems.append(Problem(file=self.file, path=json_path(at), message=message, hint=hint, code=code,
                                     severity=severity))

    def check(self, value: Any, t: mi.Type, at: At, meta: mi.Metadata | None = None) -> bool:
        """Record every type problem in ``value``; True when there is none."""
        if isinstance(t, mi.Metadata):
            return self.check(value, t.type, at, t)
        if isinstance(t, mi.UnionType):
            fitting = [x for x in t.types if _matches(value, x)]
            if not fitting:
                others = [x for x in t.types if not isinstance(x, mi.NoneType)]
                if len(others) == 1:  # an optional value: report as the one real type would
                    return self.check(value, others[0], at, meta)
                return self._wrong_type(value, t, at, meta)
            return self.check(value, fitting[0], at, meta)
        if isinstance(t, mi.LiteralType):
            return self._check_literal(value, t, at, meta)
        if not _matches(value, t):
            return self._wrong_type(value, t, at, meta)
        if isinstance(t, mi.StructType):
            return self._check_struct(value, t, at)
        if isinstance(t, mi.ListType):
            ok = self._check_length(value, t, at, "item", meta)
            return all([self.check(item, t.item_type, (*at, i)) for i, item in enumerate(value)]) and ok
        if isinstance(t, mi.DictType):
            return all([self.check(v, t.value_type, (*at, k)) for k, v in value.items()])
        if isinstance(t, mi.StrType):
            return self._check_str(value, t, at, meta)
        if isinstance(t, mi.IntType | mi.FloatType):
            return self._check_range(value, t, at, meta)
        return True

    def _wrong_type(self, value: Any, t: mi.Type, at: At, meta: mi.Metadata | None) -> bool:
        expected = words.describe(t)
        key = writable(at[-1]) if at and isinstance(at[-1], str) else None
        hint = self.fix(meta, words.give(t, key))
        wraps = isinstance(t, mi.ListType) and _matches(value, t.item_type)
        if isinstance(value, str) and (expected.startswith("an array of strings") or wraps):
            hint = f"wrap it in brackets: [{js_string(value)}]"
        elif isinstance(value, str) and expected in ("true or false", "an integer", "a number"):
            hint = f"write the value without quotes: {value}" if _bare_ok(value, t) else hint
            if expected == "true or false" and not _bare_ok(value, t):
                hint = "write true or false, without quotes"
        if expected == "an integer" and beyond_exact_integers(value):
            self.add(at, f"expected an integer, got {value_in_words(value)}, {INEXACT_INTEGER}", hint, code="type")
            return False
        self.add(at, f"expected {expected}, got {self.words(value, at)}", hint, code="type")
        return False

    def _check_literal(self, value: Any, t: mi.LiteralType, at: At, meta: mi.Metadata | None) -> bool:
        if value in t.values:
            return True
        allowed = ", ".join(words.js_value(v) for v in t.values)
        hint = f"use one of {allowed}"
        if isinstance(value, str):
            close = difflib.get_close_matches(value, [str(v) for v in t.values], n=1, cutoff=0.6)
            if close:
                hint = f'did you mean "{close[0]}"? Allowed: {allowed}'
        what = _word(meta, words.WHAT) or "value"
        self.add(at, f"{self.words(value, at)} is not a valid {what}", hint, code="enum")
        return False

    def _check_struct(self, value: dict[str, Any], t: mi.StructType, at: At) -> bool:
        fields = {f.encode_name: f for f in t.fields}
        ok = True
        unknown = unknown_fields_are(t.cls)
        for key in value:
            if key not in fields and unknown != "allowed":
                close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
                hint = (f'did you mean "{close[0]}"?' if close else "remove it.") + \
                    " Known fields: " + ", ".join(fields)
                self.add((*at, key), f'unknown field "{writable(key)}"', hint, code="unknown-field",
                         severity="warning" if unknown == "warning" else "error")
                ok = ok and unknown == "warning"
        for name, field in fields.items():
            if name in value:
                ok = self.check(value[name], field.type, (*at, name)) and ok
            elif field.required:
                example = words.describe(field.type)
                self.add((*at, name), f'required field "{name}" is missing',
                         f'add "{name}": {example}' + _meta_suffix(field.type), code="missing")
                ok = False
        self.structs.append((at, t.cls, ok))
        return ok

    def _check_length(self, value: Any, t: mi.ListType | mi.StrType, at: At, unit: str,
                      meta: mi.Metadata | None) -> bool:
        if t.min_length is not None and len(value) < t.min_length:
            units = f"{t.min_length} {unit}{'s' if t.min_length != 1 else ''}"
            self.add(at, f"needs at least {units}", self.fix(meta, f"give at least {units}"), code="length")
            return False
        if t.max_length is not None and len(value) > t.max_length:
            self.add(at, f"allows at most {t.max_length} {unit}s, got {len(value)}",
                     self.fix(meta, f"shorten it to at most {t.max_length} {unit}s"), code="length")
            return False
        return True

    def _check_str(self, value: str, t: mi.StrType, at: At, meta: mi.Metadata | None) -> bool:
        if (lone := first_lone(value)) is not None:  # ("\ud800": JSON escapes it, UTF-8 cannot hold it)
            self.add(at, not_valid_unicode("the text", lone), LONE_SURROGATE_HINT, code="encoding")
            return False
        if t.min_length and not value:
            self.add(at, "must not be empty", self.fix(meta, "write something in it"), code="length")
            return False
        if not self._check_length(value, t, at, "character", meta):
            return False
        if t.pattern is not None and _js_pattern(t.pattern).search(value) is None:
            means = _word(meta, words.PATTERN_MEANS) or f"matching {t.pattern}"
            hint = self.fix(meta, f"write it as {means}" if _word(meta, words.PATTERN_MEANS) else
                            f"write it to match {t.pattern}")
            suggest = words.SUGGESTIONS.get(_word(meta, words.SUGGEST) or "")
            if suggest is not None:
                suggestion = suggest(value)
                # ("nonsense" is not offered back, nor the example the fix gives already)
                if suggestion and _js_pattern(t.pattern).search(suggestion) and f'"{suggestion}"' not in hint:
                    hint = f'{hint}; for example "{suggestion}"'
            self.add(at, f"{js_string(value)} is not {means}", hint, code="pattern")
            return False
        return True

    def _check_range(self, value: float, t: mi.IntType | mi.FloatType, at: At, meta: mi.Metadata | None) -> bool:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            bound = getattr(t, attr)
            if bound is not None and not _RANGE_TESTS[sign](value, bound):
                # (NaN and the infinities have no JSON spelling: not "null")
                shown = "NaN" if value != value else self.words(value, at).removeprefix("the number ") \
                    if math.isinf(value) else js_number(value)
                give = f"give {words.describe(t)} {words.bounds_words(t)}"
                self.add(at, f"must be {sign} {js_number(bound)}, got {shown}", self.fix(meta, give), code="range")
                return False
        return True

    def run_rules(self, value: Any, at: At) -> None:
        """Run the cross-field rules of every Struct in ``value``, depth first."""
        if isinstance(value, StrictStruct):
            for field in value.__struct_fields__:
                name = _encode_name(type(value), field)
                self.run_rules(getattr(value, field), (*at, name))
            self.problems.extend(problems_at(self.file, at, value.findings()))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.run_rules(item, (*at, i))
        elif isinstance(value, dict):
            for key, item in value.items():
                self.run_rules(item, (*at, key))


def _encode_name(cls: type[msgspec.Struct], field: str) -> str:
    names = dict(zip(cls.__struct_fields__, cls.__struct_encode_fields__, strict=True))
    return names[field]


def unknown_fields_are(cls: type[Any]) -> str:
    """``"error"``, ``"warning"`` or ``"allowed"``: what an unknown field of a Struct of ``cls`` is."""
    if cls.__struct_config__.forbid_unknown_fields:
        return "error"
    return "warning" if getattr(cls, "unknown_fields_are", None) == "warning" else "allowed"


def _word(meta: mi.Metadata | None, key: str) -> str | None:
    value = (meta.extra_json_schema or {}).get(key) if meta is not None else None
    return str(value) if value is not None else None


def _meta_hint(meta: mi.Metadata | None) -> str | None:
    return _word(meta, words.HINT) or _word(meta, "description")


@cache
def _js_pattern(pattern: str) -> re.Pattern[str]:
    """A schema pattern as JavaScript applies it: a final ``$`` matches only at the very end."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _meta_suffix(t: mi.Type) -> str:
    hint = _meta_hint(t) if isinstance(t, mi.Metadata) else None
    return f" ({hint})" if hint else ""


def _bare_ok(value: str, t: mi.Type) -> bool:
    parsed, problems = parse_json(value.encode("utf-8", "surrogatepass"), file="")
    return not problems and _matches(parsed, t)
