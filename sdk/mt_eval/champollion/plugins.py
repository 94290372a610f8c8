"""Which plugin directory a pair's ``methodPlugin`` names.

A value containing a slash (or starting with ``.``) is a path, relative to the config file's directory.
Anything else is a name, looked up in ``.champollion/methods/*/method.json`` beside the config: it matches
a plugin's manifest ``name``, its ``method_id`` (declared, or derived from the directory name) or its
directory name. An unknown or ambiguous name is an error listing the plugins found; nothing else is tried.
The Node side (``lib/champollion/plugins.js``) resolves identically.
"""

from __future__ import annotations

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
    """Every ``.champollion/methods/*/`` directory holding a method.json, in name order."""
    root = base / METHODS_DIR
    if not root.is_dir():
        return []
    found = []
    for directory in sorted((p for p in root.iterdir() if (p / "method.json").is_file()),
                            key=lambda p: utf16_key(p.name)):
        found.append(_read(directory))
    return found


def _read(directory: Path) -> FoundPlugin:
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


def resolve_plugin(value: str, base: Path) -> Path:
    """The plugin directory ``value`` names, for a config in directory ``base``."""
    if is_path(value):
        directory = (base / value)
        if not (directory / "method.json").is_file():
            problem = "no such directory" if not directory.is_dir() else "it holds no method.json"
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
    raise PluginNotFoundError(f"methodPlugin {js_string(value)} names no plugin in {base / METHODS_DIR}. "
                              f"Available plugins:\n{listing}", available)
