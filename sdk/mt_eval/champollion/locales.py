"""Locale files: where they are, their keys, and i18next plurals.

Two layouts are read: a directory per locale (``locales/en/common.json``, nested folders allowed; the
targets are ``locales/es/common.json``…) or one file per locale (``locales/en.json`` → ``locales/es.json``).
Keys are the dotted paths of string values (``nav.home``, ``list.0`` for array items); a dotted path that
names more than one string (``{"a.b": …, "a": {"b": …}}``) is a collision, and none of those strings is
translated. A target file has the source file's shape and key order; numbers (as written), booleans and
nulls are copied.

Plurals follow i18next's JSON v4 suffixes (``_zero _one _two _few _many _other``; ``_ordinal_…`` for
ordinals). A group is the set of keys with one base that has an ``_other`` key. The target gets the plural
categories of its own language (CLDR, from ``languages.json``), at the group's place, each translated
from the same category in the source or else from ``_other``; a source ``_zero`` is kept (i18next uses
it for a count of 0 in any language). For a language not in the table the source's categories are kept.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.champollion.jsonfmt import js_string, utf16_key
from mt_eval.champollion.languages import PLURAL_ORDER, plural_categories
from mt_eval.lone_surrogates import first_lone

_PLURAL_KEY = re.compile(r"^(.+)_(zero|one|two|few|many|other)\Z", re.S)


@dataclass
class Slot:
    """One string the target file needs: its dotted key and the source text it is translated from."""

    key: str
    source: str
    collision: str | None = None  # why it is not translated: another path of the file has this dotted key


@dataclass(frozen=True)
class LocaleFiles:
    """The source files of the input locale and where each target file goes."""

    directory_layout: bool
    sources: list[str]  # paths relative to the input locale's directory (or ["<input>.json"])

    def source_path(self, locales_dir: Path, input_locale: str, name: str) -> Path:
        return locales_dir / input_locale / name if self.directory_layout else locales_dir / name

    def target_name(self, locale: str, name: str) -> str:
        """The target file, relative to the locales directory (also its name in the lock file)."""
        return f"{locale}/{name}" if self.directory_layout else f"{locale}.json"

    def targets_on_disk(self, locales_dir: Path, locale: str) -> list[str]:
        """The ``*.json`` files in the locale's folder (directory layout), named as `target_name` names them,
        whether or not the lock file knows them; what cannot be read is left out."""
        folder = locales_dir / locale
        if not self.directory_layout or not folder.is_dir():
            return []
        return [self.target_name(locale, name) for name in _source_files(folder, strict=False)]


def find_locale_files(locales_dir: Path, input_locale: str) -> LocaleFiles:
    """The input locale's JSON files; FileNotFoundError when there are none, FileExistsError when both layouts
    hold some."""
    directory = locales_dir / input_locale
    single = locales_dir / f"{input_locale}.json"
    in_folder = sorted(_source_files(directory), key=utf16_key) if directory.is_dir() else []
    if in_folder and single.is_file():  # (one of them would be left out without a word)
        raise FileExistsError(f"both {directory}/ and {single} hold source strings, and only one layout is read: "
                              f"move the keys of {single.name} into a file in {directory}/, or remove one of them")
    if in_folder:
        return LocaleFiles(True, in_folder)
    if single.is_file():  # (an empty folder beside it holds nothing)
        return LocaleFiles(False, [single.name])
    if directory.is_dir():
        raise FileNotFoundError(f"no source locale files: {directory}/ holds no .json file (hidden names are "
                                f"skipped): put the {input_locale} strings in {directory}/*.json, or in {single}")
    raise FileNotFoundError(f"no source locale files: expected {directory}/*.json or {single}")


def _source_files(directory: Path, *, strict: bool = True) -> list[str]:
    """The ``*.json`` files under ``directory`` (hidden names aside), as paths relative to it. A symlinked file
    is read, a symlinked folder is not entered (as ``Path.rglob``). A folder that cannot be listed, or a ``.json``
    name that leads nowhere (a dangling or looping link), is a `FileProblem`: its strings would otherwise be left
    out without a word, and its targets' lock entries dropped (not ``strict``: it is left out)."""
    from mt_eval.champollion.files import FileProblem

    found: list[str] = []

    def walk(folder: Path, relative: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            if not strict:
                return
            raise FileProblem(folder, f"cannot read this folder of source strings: {exc.strerror or exc}",
                              "make it readable, or move it out of the locales directory") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            name = f"{relative}/{entry.name}" if relative else entry.name
            listed = entry.is_dir(follow_symlinks=False) or entry.name.endswith(".json")
            if listed and first_lone(entry.name) is not None:  # (bytes that are not UTF-8 read as lone surrogates)
                if not strict:
                    continue
                shown = os.fsencode(entry.name).decode("utf-8", "replace")  # (as Node shows it)
                raise FileProblem(folder / shown, "its name is not valid UTF-8",
                                  "rename it in UTF-8 (its target files and lock entries are named after it)")
            if entry.is_dir(follow_symlinks=False):
                walk(folder / entry.name, name)
            elif entry.name.endswith(".json") and _is_source_file(folder / entry.name, strict):
                found.append(name)

    walk(directory, "")
    return found


def _is_source_file(path: Path, strict: bool = True) -> bool:
    """Whether a ``.json`` entry is a file to read (not a folder, or a link to one); `FileProblem` when what it
    is cannot be told (not ``strict``: False)."""
    from mt_eval.champollion.files import FileProblem

    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError as exc:
        if not strict:
            return False
        if not path.is_symlink():
            raise FileProblem(path, f"cannot read it: {exc.strerror or exc}", "make it readable") from None
        target = os.readlink(path)
        what = (f"a symlink to {target}, which does not exist" if exc.errno == errno.ENOENT
                else f"a symlink to {target}, which cannot be followed: {exc.strerror or exc}")
        raise FileProblem(path, what, "fix the link, or remove it") from None


def layout(tree: Any, target_locale: str) -> Any:
    """The target file's shape: ``tree`` with each string replaced by a `Slot` and plural groups expanded
    to the target language's categories. Every slot of a dotted key that names more than one string gets
    its `Slot.collision`: none of them is translated, as no one of them is the key."""
    shape = _layout(tree, [], target_locale)
    counts = Counter(slot.key for slot in slots(shape))
    for slot in slots(shape):
        if counts[slot.key] > 1:
            slot.collision = _collision(slot.key, counts[slot.key])
    return shape


def _collision(key: str, count: int) -> str:
    """Why the ``count`` strings whose dotted key is ``key`` are not translated."""
    none = "neither is translated; rename one of them" if count == 2 else "none is translated; rename all but one"
    return f"{js_string(key)} names {count} strings in this file (a key with dots and nested keys), so {none}"


def _dotted(path: list[str]) -> str:
    return ".".join(path)


def _layout(node: Any, path: list[str], locale: str) -> Any:
    if isinstance(node, str):
        return Slot(_dotted(path), node)
    if isinstance(node, list):
        return [_layout(item, [*path, str(i)], locale) for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    groups = _plural_groups(node)
    out: dict[str, Any] = {}
    expanded: set[str] = set()
    for key, value in node.items():
        group = groups.get(key)
        if group is None:
            out[key] = _layout(value, [*path, key], locale)
            continue
        base, forms = group
        if base in expanded:
            continue
        expanded.add(base)
        kind = "ordinal" if base.endswith("_ordinal") else "cardinal"
        wanted = plural_categories(locale, kind)
        categories = list(forms) if wanted is None else [
            c for c in PLURAL_ORDER if c in wanted or (c == "zero" and "zero" in forms)]
        for category in categories:
            name = f"{base}_{category}"
            out[name] = Slot(_dotted([*path, name]), forms.get(category, forms["other"]))
    return out


def _plural_groups(node: dict[str, Any]) -> dict[str, tuple[str, dict[str, str]]]:
    """Key → (base, {category: text}) for the keys of ``node`` that belong to a plural group."""
    forms: dict[str, dict[str, str]] = {}
    for key, value in node.items():
        match = _PLURAL_KEY.match(key)
        if match and isinstance(value, str):
            forms.setdefault(match.group(1), {})[match.group(2)] = value
    groups: dict[str, tuple[str, dict[str, str]]] = {}
    for base, found in forms.items():
        if "other" in found:
            for category in found:
                groups[f"{base}_{category}"] = (base, found)
    return groups


def slots(shape: Any) -> list[Slot]:
    """The slots of a layout, in file order."""
    out: list[Slot] = []

    def walk(node: Any) -> None:
        if isinstance(node, Slot):
            out.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item)

    walk(shape)
    return out


def fill(shape: Any, values: dict[str, str]) -> Any:
    """The target file: each slot's value from ``values``. A slot without a value (or whose key collides)
    is left out of its object, and an object left empty goes too; in an array it keeps its source text, so
    indexes do not shift."""
    def value(slot: Slot) -> str | None:
        return None if slot.collision else values.get(slot.key)

    if isinstance(shape, Slot):
        return value(shape)
    if isinstance(shape, list):
        return [(value(item) if value(item) is not None else item.source) if isinstance(item, Slot)
                else fill(item, values) for item in shape]
    if not isinstance(shape, dict):
        return shape
    out: dict[str, Any] = {}
    for key, item in shape.items():
        if isinstance(item, Slot):
            text = value(item)
            if text is not None:
                out[key] = text
            continue
        filled = fill(item, values)
        if isinstance(filled, dict) and not filled and item:
            continue
        out[key] = filled
    return out


def string_values(tree: Any) -> dict[str, str]:
    """Dotted key → string for every string in a (target) file; the first of colliding keys wins."""
    out: dict[str, str] = {}

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, str):
            out.setdefault(_dotted(path), node)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, [*path, str(i)])
        elif isinstance(node, dict):
            for key, item in node.items():
                walk(item, [*path, key])

    walk(tree, [])
    return out
