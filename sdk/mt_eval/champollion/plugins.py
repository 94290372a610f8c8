"""Which plugin directory a pair's ``methodPlugin`` names.

A value containing a slash (or starting with ``.``) is a path, relative to the config file's directory.
Anything else is a name, looked up in ``.champollion/methods/*/method.json`` beside the config: it matches
a plugin's manifest ``name``, its ``method_id`` (declared, or derived from the directory name) or its
directory name. An unknown or ambiguous name is an error listing the plugins found, and the entries that
cannot be plugins with why (a symlink to a missing target, a directory without method.json); nothing else
is tried.
The Node side (``lib/champollion/plugins.js``) resolves identically.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mt_eval.champollion.files import FileProblem, read_json
from mt_eval.champollion.jsonfmt import js_string, utf16_key
from mt_eval.errors import ExpectedError
from mt_eval.manifest import kebab_case

METHODS_DIR = Path(".champollion", "methods")


@dataclass(frozen=True)
class FoundPlugin:
    """A plugin directory under ``.champollion/methods``, as far as its method.json could be read."""

    directory: Path
    name: str | None
    method_id: str | None
    problem: str | None = None

    def describe(self) -> str:
        where = f"{METHODS_DIR.as_posix()}/{self.directory.name}"
        if self.problem:
            return f"{where} (unusable: {self.problem})"
        return f"{js_string(self.name or '')} (method_id {self.method_id}) in {where}"


class PluginNotFoundError(ExpectedError, LookupError):
    """``methodPlugin`` names no plugin; the message lists the plugins that exist."""

    def __init__(self, message: str, available: list[FoundPlugin]) -> None:
        super().__init__(message)
        self.available = available


def is_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.startswith(".")


def find_plugins(base: Path) -> list[FoundPlugin]:
    """Every entry of ``.champollion/methods/`` (hidden ones aside), in name order: a plugin directory, or an
    entry that cannot be one, with why (a symlink to a missing target, no method.json, an unreadable one)."""
    root = base / METHODS_DIR
    if not root.is_dir():
        return []
    entries = sorted((p for p in root.iterdir() if not p.name.startswith(".")), key=lambda p: utf16_key(p.name))
    return [_read(entry) for entry in entries]


def entry_problem(entry: Path) -> str | None:
    """Why ``entry`` is not a plugin directory, before its method.json is read (None: it may be one)."""
    if entry.is_symlink() and not entry.exists():
        target = os.readlink(entry)
        return f"a symlink to {target} ({os.path.normpath(entry.parent / target)}), which does not exist"
    if not entry.exists():
        return "no such directory"
    if not entry.is_dir():
        return "not a directory"
    if not (entry / "method.json").is_file():
        return "a directory without method.json"
    return None


def _read(directory: Path) -> FoundPlugin:
    if problem := entry_problem(directory):
        return FoundPlugin(directory, None, None, problem)
    try:
        data = read_json(directory / "method.json")
    except FileProblem as exc:
        return FoundPlugin(directory, None, None, f"method.json cannot be read: {exc.what}")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return FoundPlugin(directory, None, None, 'method.json has no "name"')
    method_id = data.get("method_id")
    if not isinstance(method_id, str) or not method_id:
        method_id = kebab_case(directory.resolve().name)
    return FoundPlugin(directory, data["name"], method_id)


def resolve_plugin(value: str, base: Path, *, pair: str | None = None) -> Path:
    """The plugin directory ``value`` names, for a config in directory ``base``; ``pair``, the config's pair
    whose methodPlugin it is, is named in the error (a config may name several plugins)."""
    try:
        return _resolve(value, base)
    except PluginNotFoundError as exc:
        if pair is None:
            raise
        raise PluginNotFoundError(f"pair {js_string(pair)}: {exc}", exc.available) from None


def _resolve(value: str, base: Path) -> Path:
    if is_path(value):
        directory = Path(os.path.abspath(base / value))  # ("../x" resolved, as Node's path.resolve)
        if problem := entry_problem(directory):
            raise PluginNotFoundError(f"methodPlugin {js_string(value)}: {directory}: {problem}", [])
        return directory
    available = find_plugins(base)
    matches = [p for p in available if p.problem is None and value in (p.name, p.method_id, p.directory.name)]
    if len(matches) == 1:
        return matches[0].directory
    listing = "\n".join(f"  - {p.describe()}" for p in available) or "  (none)"
    if matches:
        raise PluginNotFoundError(f"methodPlugin {js_string(value)} is ambiguous: it names {len(matches)} plugins; "
                                  f"use a path or a method_id instead. Plugins in {base / METHODS_DIR}:\n{listing}",
                                  available)
    unusable = next((p for p in available if p.problem is not None and p.directory.name == value), None)
    if unusable is not None:
        fix = (f"correct its method.json (mt-eval validate {base / METHODS_DIR / value} says what is wrong)"
               if (unusable.problem or "").startswith("method.json") else
               "make it the plugin's directory (or a symlink to it), or set methodPlugin to the plugin's path")
        raise PluginNotFoundError(
            f"methodPlugin {js_string(value)} names {METHODS_DIR.as_posix()}/{value}, which cannot be used: "
            f"{unusable.problem}. Fix: {fix}. Plugins in {base / METHODS_DIR}:\n{listing}", available)
    raise PluginNotFoundError(f"methodPlugin {js_string(value)} names no plugin in {base / METHODS_DIR}. "
                              f"Available plugins:\n{listing}", available)
