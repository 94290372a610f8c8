"""JSON and JSONL corpora: the upstream shape, a flat list of entries, or one entry per line.

Field aliases — ``src``/``original``/``source_text`` for ``source``, ``target``/``translation``/``ref``/
``tgt``/``target_text`` for ``reference`` — are read only where the canonical field is absent; the field is
renamed, so a reference never reaches a method under another name. When no entry has an ``id``, ids are
line numbers (JSONL) or positions from 1 (a JSON list). Text holding a lone surrogate escape (``"\\ud800"``:
Python's json reads it, but it is no character and cannot be written as UTF-8) is refused at its JSON path.
"""

from __future__ import annotations

import hashlib
import json
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.control_chars import first_control
from mt_eval.corpus.duplicate_keys import keys_held, refuse_duplicate_keys
from mt_eval.corpus.files import FileText, display_name, split_lines
from mt_eval.corpus.model import ALIASES, Corpus, CorpusError, CorpusFile, type_name
from mt_eval.corpus.names import misspelling_of
from mt_eval.corpus.on_disk import ON_DISK_FROM, EntriesOnDisk
from mt_eval.json_input import TooManyDigits, int_or_too_long, same_on_every_python
from mt_eval.pairs import PairError, language_code, parse_pair
from mt_eval.problems import Problem, json_path

_decode = msgspec.json.Decoder().decode
_READ_BLOCK = 16 << 20
_UPSTREAM_KEYS = ("entries", "dataset", "language_pair")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # in the file: \ud800 to \udfff
_SURROGATE = re.compile("[\ud800-\udfff]")  # in the text read
_UPSTREAM_EXAMPLE = ('e.g. {"language_pair": {"source": "eng", "target": "spa"}, '
                     '"entries": [{"id": "1", "source": "...", "reference": "..."}]}')


def read_json(file: FileText) -> Corpus:
    try:
        data = _decode(file.text)
    except msgspec.DecodeError:
        try:
            data = json.loads(file.text, parse_int=int_or_too_long)  # what msgspec refuses and json accepts: NaN,
            # lone surrogates, integers beyond 64 bits (and, to be refused below, beyond the digits int() reads)
        except json.JSONDecodeError as error:
            exc = same_on_every_python(error)
            raise CorpusError.single(file.path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                                     code="syntax", hint=_jsonl_named_json(file)) from error
        problems = _lone_surrogates(file, data, "$", file.text)
        if problems:
            raise CorpusError(problems, summary=f"corpus {file.path} holds text that is not Unicode") from None
        if problems := _too_long_integers(file, data, "$"):
            raise CorpusError(problems, summary=f"corpus {file.path} holds integers too long to read") from None
    entries = data if isinstance(data, list) else data.get("entries") if isinstance(data, dict) else None
    around = {k: v for k, v in data.items() if k != "entries"} if isinstance(data, dict) else None
    refuse_duplicate_keys(file.path, file.text, _top_keys(entries) + keys_held(around))
    corpus = Corpus(path=file.path, name=display_name(file.path), sha256=file.sha256, entries=[], format="json",
                    files=[CorpusFile(role="corpus", path=file.path, sha256=file.sha256)])
    if isinstance(data, list):
        corpus.entries = data
    elif isinstance(data, dict):
        _read_upstream(corpus, data)
    else:
        raise CorpusError.single(file.path, 'expected a list of entries, or an object with an "entries" list',
                                 hint=_UPSTREAM_EXAMPLE, code="shape")
    _read_fields(corpus, "positions")
    return corpus


def read_jsonl(file: FileText) -> Corpus:
    entries: list[Any] = []
    lines: list[int] = []
    problems: list[Problem] = []
    for number, line in enumerate(split_lines(file.text), start=1):
        try:
            entries.append(_decode(line))
        except msgspec.DecodeError:
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line, parse_int=int_or_too_long))  # what msgspec refuses and json
                # accepts (NaN, lone surrogates, integers beyond 64 bits)
            except json.JSONDecodeError as error:
                exc = same_on_every_python(error)
                problems.append(Problem(file=str(file.path), path=f"line {number}", code="syntax",
                                        message=f"invalid JSON at column {exc.colno}: {exc.msg}",
                                        hint="one JSON object per line"))
                if len(problems) >= 50:
                    break
                continue
            problems.extend(_lone_surrogates(file, entries[-1], f"line {number}", line))
            problems.extend(_too_long_integers(file, entries[-1], f"line {number}"))
        lines.append(number)
    if problems:
        if all(p.code == "syntax" for p in problems) and (whole := _json_named_jsonl(file)) is not None:
            raise CorpusError.single(file.path, f"holds one JSON {whole} over several lines, not one JSON object per "
                                     "line", code="syntax", hint=f"name it {_renamed(file.path, '.json')}")
        raise CorpusError(problems[:50], summary=f"corpus {file.path} has invalid lines")
    refuse_duplicate_keys(file.path, file.text, _top_keys(entries), by_line=True)
    corpus = Corpus(path=file.path, name=display_name(file.path), sha256=file.sha256, entries=entries,
                    format="jsonl", lines=lines,
                    files=[CorpusFile(role="corpus", path=file.path, sha256=file.sha256)])
    _read_fields(corpus, "line numbers")
    return corpus


def _top_keys(entries: Any) -> int:
    """The keys of the entries themselves (those of objects nested in them are not counted: see
    `mt_eval.corpus.duplicate_keys`)."""
    if not isinstance(entries, list):
        return 0
    try:
        return sum(map(len, entries))  # (in C: every entry an object, as they should be)
    except TypeError:  # an entry that is no object (its own error later): counted as none
        return sum(len(entry) for entry in entries if type(entry) is dict)


def read_jsonl_on_disk(path: Path) -> Corpus | None:
    """A plain JSONL corpus whose entries stay on disk (`mt_eval.corpus.on_disk`), or None when the file is
    not one to read this way (compressed, small, UTF-16, a line msgspec does not read): `read_jsonl` then reads
    it, and says what is wrong with it if anything is."""
    if path.name.lower().endswith(".gz") or not path.is_file() or path.stat().st_size < max(ON_DISK_FROM, 1):
        return None
    digest = hashlib.sha256()
    offsets, lengths, numbers = array("q"), array("q"), array("q")
    number = 0
    at = 0  # the file offset of ``pending``
    pending = b""
    with path.open("rb") as file:
        while block := file.read(_READ_BLOCK):
            if at == 0 and not pending and block[:2] in (b"\xff\xfe", b"\xfe\xff"):
                return None  # UTF-16: read in memory
            digest.update(block)
            data = pending + block
            start = 3 if at == 0 and data.startswith(b"\xef\xbb\xbf") else 0
            while (end := data.find(b"\n", start)) >= 0:
                number += 1
                if not _entry_line(data, start, end, at, offsets, lengths, numbers, number):
                    return None
                start = end + 1
            at += start
            pending = data[start:]
    if pending:
        number += 1
        if not _entry_line(pending, 0, len(pending), at, offsets, lengths, numbers, number):
            return None
    import numpy as np  # (imported here: only a large corpus needs it)

    sha256 = digest.hexdigest()
    entries = EntriesOnDisk(path, np.frombuffer(offsets, np.int64), np.frombuffer(lengths, np.int64).astype(np.int32),
                            np.frombuffer(numbers, np.int64).astype(np.int32), EntryFixer(aliases=False))
    corpus = Corpus(path=path, name=display_name(path), sha256=sha256, entries=entries,
                    format="jsonl", lines=entries.numbers,  # type: ignore[arg-type]
                    files=[CorpusFile(role="corpus", path=path, sha256=sha256)])
    _read_fields(corpus, "line numbers")  # notes the aliases and whether ids are line numbers
    entries.fix = EntryFixer(implicit_ids=corpus.ids_from == "line numbers")
    return corpus


def _entry_line(data: bytes, start: int, end: int, at: int, offsets: array[int], lengths: array[int],
                numbers: array[int], number: int) -> bool:
    """Note the line ``data[start:end]`` (file offset ``at + start``) when it is an entry; False when msgspec
    cannot read it (the in-memory reader then says what is wrong)."""
    line = data[start:end]
    if not line.strip():
        return True
    try:
        _decode(line)
    except msgspec.DecodeError:
        return False
    offsets.append(at + start)
    lengths.append(end - start)
    numbers.append(number)
    return True


@dataclass(frozen=True)
class EntryFixer:
    """What makes a decoded line of an on-disk corpus the entry the in-memory reader makes (`EntriesOnDisk.fix`):
    its field ``aliases`` renamed (`_read_fields`; ambiguous ones were refused), its id its line number when
    ``implicit_ids`` (no entry has one), and, once the checks have noted the integer ids, an integer id its text
    (``text_ids``). A class rather than a closure, so that entries on disk can be sent to a scorer process."""

    aliases: bool = True
    implicit_ids: bool = False
    text_ids: bool = False

    def __call__(self, entry: Any, number: int) -> Any:
        if type(entry) is dict:
            if self.aliases:
                for role, names in ALIASES.items():
                    if entry.get(role) is None:
                        present = [name for name in names if name in entry]
                        if len(present) == 1:
                            entry[role] = entry.pop(present[0])
            if self.implicit_ids:
                entry["id"] = str(number)
            elif self.text_ids and type(entry.get("id")) is int:
                entry["id"] = str(entry["id"])
        return entry


def _read_fields(corpus: Corpus, implicit_ids: str) -> None:
    """Apply field aliases; note every field name (`Corpus.field_names`); give ids when no entry has one."""
    problems: list[Problem] = []
    any_id = False
    note_names = corpus.field_names.update
    for i, entry in enumerate(corpus.entries):
        if type(entry) is not dict:
            continue
        any_id = any_id or "id" in entry
        for role, names in ALIASES.items():
            if entry.get(role) is None:
                present = [name for name in names if name in entry]
                if len(present) == 1:
                    entry[role] = entry.pop(present[0])
                    corpus.aliases.setdefault(present[0], role)
                elif present:
                    fields = " and ".join(f'"{name}"' for name in present)
                    problems.append(Problem(file=str(corpus.path), path=corpus.where(i), code="aliases",
                                            message=f"{fields} could each be the {role}",
                                            hint=f'name the {role} field "{role}"'))
        note_names(entry)
        if len(problems) >= 50:
            break
    if problems:
        raise CorpusError(problems, summary=f"corpus {corpus.path} has ambiguous fields")
    if not any_id and corpus.entries:
        numbers = corpus.lines if corpus.lines is not None else range(1, len(corpus.entries) + 1)
        for entry, number in zip(corpus.entries, numbers, strict=True):
            if type(entry) is dict:
                entry["id"] = str(number)
        corpus.ids_from = implicit_ids


def _read_upstream(corpus: Corpus, data: dict[str, Any]) -> None:
    """The upstream shape: ``entries``, with ``dataset`` (name, licence, gold fields) and ``language_pair``
    (``{"source": "eng", "target": "spa"}``, or a pair as ``--pair`` takes it: ``"eng>spa"``, ``"eng-spa"``).
    A key close to one of these is refused, ``gold_fields`` outside ``dataset`` too; other keys are ignored,
    with a warning."""
    path = corpus.path
    ignored = []
    for key in data:
        meant = misspelling_of(key, (*_UPSTREAM_KEYS, "gold_fields"))
        if meant == "gold_fields" or key == "gold_fields":
            raise CorpusError.single(path, f'"{key}" is read only inside "dataset": here it would mark nothing as '
                                     "gold", where=json_path([key]), code="shape",
                                     hint='move it: "dataset": {"gold_fields": [...]}')
        if meant is not None:
            raise CorpusError.single(path, f'"{key}" is not a key of the upstream shape', where=json_path([key]),
                                     hint=f'did you mean "{meant}"?', code="shape")
        if key not in _UPSTREAM_KEYS:
            ignored.append(f'"{key}"')
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise CorpusError.single(path, 'expected a list of entries, or an object with an "entries" list'
                                 if entries is None else f'"entries" must be a list, got {type_name(entries)}',
                                 hint=_UPSTREAM_EXAMPLE, code="shape", where="$" if entries is None else "$.entries")
    if ignored:
        corpus.warnings.append(f"the top-level key{'s' if len(ignored) > 1 else ''} {', '.join(ignored)} "
                               f"{'are' if len(ignored) > 1 else 'is'} not read (the upstream shape reads "
                               '"entries", "dataset" and "language_pair"): ignored')
    dataset = {} if data.get("dataset") is None else data["dataset"]
    if not isinstance(dataset, dict):
        raise CorpusError.single(path, f'"dataset" must be an object, got {type_name(dataset)}', where="$.dataset",
                                 code="type", hint='e.g. "dataset": {"name": "tiny-news", "license": "CC0-1.0"}')
    for key in dataset:
        if key != "gold_fields" and misspelling_of(key, ["gold_fields"]):
            raise CorpusError.single(path, f'"{key}" is not read', where=json_path(["dataset", key]), code="shape",
                                     hint='did you mean "gold_fields"? (the fields a method must never see)')
    corpus.entries, corpus.entries_at, corpus.dataset = entries, "$.entries", dataset
    corpus.name = str(dataset.get("name") or dataset.get("id") or corpus.name)
    control = first_control(corpus.name)
    if control is not None:  # (the name is printed on terminals, where ESC is obeyed, and published)
        key = "name" if dataset.get("name") else "id"
        raise CorpusError.single(path, f"the corpus's {key} {corpus.name[:60]!r} holds the control character "
                                 f"{control}", where=f"$.dataset.{key}", code="control",
                                 hint="a name is shown on terminals and leaderboards: write it without control "
                                 "characters (tabs and line breaks included)")
    corpus.source_lang, corpus.target_lang = _language_pair(path, data.get("language_pair"))
    corpus.license = _text(dataset.get("license"))


def _language_pair(path: Path, pair: Any) -> tuple[str | None, str | None]:
    """The source and target languages ``language_pair`` names (None, None without one), written as ``--pair``
    writes them (``cmn_Hans`` → ``cmn-Hans``)."""
    if pair is None:
        return None, None
    hint = 'write it as {"source": "eng", "target": "spa"}, or as "eng>spa"'
    if isinstance(pair, dict):
        languages = _text(pair.get("source")), _text(pair.get("target"))
        missing = [side for side, code in zip(("source", "target"), languages, strict=True) if code is None]
        if missing:
            raise CorpusError.single(path, f"the language pair names no {' and no '.join(missing)} language",
                                     where="$.language_pair", code="pair", hint=hint)
        codes = []
        for side, code in zip(("source", "target"), languages, strict=True):
            try:
                codes.append(language_code(str(code)))
            except PairError as error:
                raise CorpusError.single(path, str(error), where=f"$.language_pair.{side}", code="pair") from None
        return codes[0], codes[1]
    if not isinstance(pair, str):
        raise CorpusError.single(path, f"a language pair must be an object or a string, got {type_name(pair)}",
                                 where="$.language_pair", code="type", hint=hint)
    try:
        source, _, target = parse_pair(pair).partition(">")
    except PairError:
        raise CorpusError.single(path, f'"{pair}" is not a language pair', where="$.language_pair",
                                 code="pair", hint=hint) from None
    return source, target


def _lone_surrogates(file: FileText, value: Any, where: str, text: str) -> list[Problem]:
    """Each text in ``value`` (decoded from ``text``, found at ``where``) that holds a lone surrogate: half of a
    UTF-16 pair, which is no character. Python's json reads the escape ``\\ud800`` alone (msgspec refuses it);
    such a text cannot be written as UTF-8, so a method's answer, the card or ``corpus show`` would fail on it."""
    if not _SURROGATE_ESCAPE.search(text):
        return []
    return [Problem(file=str(file.path), path=place, code="encoding",
                    message=f"holds a lone surrogate (\\u{ord(char):04x}): half of a UTF-16 pair, not a character, "
                            "so the text is not valid Unicode",
                    hint="write the character itself, or both halves of its pair (e.g. \\ud83d\\ude00), or remove "
                         "the escape") for place, char in islice(_surrogates(value, where), 50)]


def _surrogates(value: Any, where: str) -> Iterator[tuple[str, str]]:
    for place, leaf in _leaves(value, where):
        if isinstance(leaf, str) and (found := _SURROGATE.search(leaf)):
            yield place, found.group()


def _too_long_integers(file: FileText, value: Any, where: str) -> list[Problem]:
    """Each integer in ``value`` (found at ``where``) written with more digits than Python reads (`TooManyDigits`)."""
    found = ((place, leaf) for place, leaf in _leaves(value, where) if isinstance(leaf, TooManyDigits))
    return [Problem(file=str(file.path), path=place, code="number", message=leaf.message, hint=TooManyDigits.HINT)
            for place, leaf in islice(found, 50)]


def _leaves(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every object key, and every value that is no list or object, in ``value`` (found at ``where``), with its
    path."""
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if key.isidentifier() else f"{where}[{json.dumps(key)}]"
            yield inner, key
            yield from _leaves(item, inner)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{where}[{index}]")
    else:
        yield where, value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _jsonl_named_json(file: FileText) -> str | None:
    """The fix for a .json file that holds JSON lines (one object per line): its JSONL name; else None."""
    lines = [line for line in split_lines(file.text) if line.strip()]
    if len(lines) < 2:
        return None
    try:
        if all(isinstance(json.loads(line, parse_int=int_or_too_long), dict) for line in lines):
            return f"it holds JSON lines (one object per line): name it {_renamed(file.path, '.jsonl')}"
    except json.JSONDecodeError:
        pass
    return None


def _json_named_jsonl(file: FileText) -> str | None:
    """What a .jsonl file holds when it is one JSON value spread over lines (a pretty-printed list): "list" or
    "object"; else None."""
    if sum(1 for line in split_lines(file.text) if line.strip()) < 2:
        return None
    try:
        value = json.loads(file.text, parse_int=int_or_too_long)
    except json.JSONDecodeError:
        return None
    return "list" if isinstance(value, list) else "object" if isinstance(value, dict) else None


def _renamed(path: Path, suffix: str) -> str:
    name = path.name
    gz = name.lower().endswith(".gz")
    stem = name[:-3] if gz else name
    stem = stem[: stem.rfind(".")] if "." in stem else stem
    return stem + suffix + (".gz" if gz else "")
