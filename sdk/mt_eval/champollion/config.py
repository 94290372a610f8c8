"""``champollion.config.json`` version 3: which method plugin translates each language pair.

::

    {
      "version": 3,
      "inputLocale": "en",
      "localesDir": "locales",
      "pairs": {
        "en:es": {"methodPlugin": "apertium-eng-spa", "batchSize": 32},
        "en->fr": {"methodPlugin": "./plugins/my-llm", "model": "gpt-4o-mini", "temperature": 0}
      }
    }

Pair keys are ``src:tgt``, ``src->tgt`` or ``src→tgt``; every pair translates from ``inputLocale``. Per pair:
``methodPlugin`` (required: a plugin name under ``.champollion/methods/``, or a relative path), ``model``,
``temperature``, ``batchSize`` (default 16) and ``sourceLanguage``/``targetLanguage`` (the method's language
codes, when the built-in mapping does not fit). Unknown fields are warnings; bad JSON and wrong types are
errors located by their JSON path. The Node side (``lib/champollion/config.js``) reports the same problems
at the same paths (`bridge/vectors/champollion/config.json`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec

from mt_eval.champollion.jsonfmt import js_string
from mt_eval.champollion.languages import LOCALE_PATTERN, normalize_locale
from mt_eval.problems import Finding, Problem, ProblemsError, json_path
from mt_eval.records import LanguageCode
from mt_eval.strict import StrictStruct, decode_value, parse_json

CONFIG_FILE = "champollion.config.json"
CONFIG_VERSION = 3

LocaleCode = Annotated[str, msgspec.Meta(
    pattern=LOCALE_PATTERN,
    extra={"pattern_means": "a locale code", "hint": 'use a locale code such as "en", "es" or "pt-BR"'})]
_PAIR_SEPARATORS = ("->", "→", ":")
_LOCALE = re.compile(LOCALE_PATTERN)


class PairSettings(StrictStruct, rename="camel", forbid_unknown_fields=False):
    """How one language pair is translated."""

    method_plugin: Annotated[str, msgspec.Meta(min_length=1)]
    model: str | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    batch_size: Annotated[int, msgspec.Meta(ge=1)] = 16
    source_language: LanguageCode | None = None
    target_language: LanguageCode | None = None


class ConfigFile(StrictStruct, rename="camel", forbid_unknown_fields=False):
    """The file as written."""

    version: int
    input_locale: LocaleCode
    pairs: dict[str, PairSettings]
    locales_dir: Annotated[str, msgspec.Meta(min_length=1)] = "locales"
    schema: str | None = msgspec.field(default=None, name="$schema")

    def findings(self) -> Iterator[Finding]:
        if self.version != CONFIG_VERSION:
            yield Finding(("version",), f"version {self.version} is not supported: this reader understands "
                          f"champollion.config.json version {CONFIG_VERSION}",
                          "write the file in the version 3 format (see the README)", code="version")
        if not self.pairs:
            yield Finding(("pairs",), "no pairs: nothing will be translated", 'add one, e.g. "en:es": '
                          '{"methodPlugin": "my-method"}', severity="warning", code="empty")
        seen: dict[tuple[str, str], str] = {}
        for key in self.pairs:
            parsed = split_pair_key(key)
            if parsed is None:
                yield Finding(("pairs", key), f"{js_string(key)} is not a language pair",
                              'write it as "src:tgt" (also "src->tgt" or "src→tgt"), e.g. "en:es"', code="pair-key")
                continue
            source, target = (normalize_locale(p) for p in parsed)
            if source != normalize_locale(self.input_locale):
                yield Finding(("pairs", key), f"translates from {parsed[0]}, but inputLocale is {self.input_locale}",
                              f'every pair starts from the input locale: "{self.input_locale}:{parsed[1]}"',
                              code="pair-source")
            elif target == source:
                yield Finding(("pairs", key), "source and target locales are the same",
                              "name a target locale other than the input locale", code="pair-target")
            elif (source, target) in seen:
                yield Finding(("pairs", key), f"the same pair as {js_string(seen[(source, target)])}",
                              "keep one of them", code="pair-duplicate")
            else:
                seen[(source, target)] = key


def split_pair_key(key: str) -> tuple[str, str] | None:
    """``"en:es"``, ``"en->es"`` or ``"en→es"`` → ("en", "es"); None when it is not a pair of locales."""
    for separator in _PAIR_SEPARATORS:
        if separator in key:
            parts = [p.strip() for p in key.split(separator)]
            if len(parts) == 2 and all(_LOCALE.match(p) for p in parts):
                return parts[0], parts[1]
            return None
    return None


@dataclass(frozen=True)
class Pair:
    """One pair of a config: its key as written, its locales and settings."""

    key: str
    source: str
    target: str
    settings: PairSettings


@dataclass(frozen=True)
class ChampollionConfig:
    """A valid config, with paths resolved against its file's directory."""

    file: Path
    input_locale: str
    locales_dir: Path
    pairs: list[Pair]
    warnings: list[Problem]

    @property
    def directory(self) -> Path:
        return self.file.parent

    def pair(self, key: str) -> Pair:
        """The pair written ``key`` (any separator); KeyError listing the pairs when there is none."""
        wanted = split_pair_key(key)
        for pair in self.pairs:
            if pair.key == key or (wanted is not None and (normalize_locale(pair.source), normalize_locale(
                    pair.target)) == (normalize_locale(wanted[0]), normalize_locale(wanted[1]))):
                return pair
        raise KeyError(f"{self.file} has no pair {key}; its pairs: {', '.join(p.key for p in self.pairs) or 'none'}")


def config_path(path: str | Path | None) -> Path:
    """The config file for ``path``: the file itself, or ``champollion.config.json`` in a directory."""
    chosen = Path(path) if path is not None else Path(CONFIG_FILE)
    return chosen / CONFIG_FILE if chosen.is_dir() else chosen


def decode_config(raw: bytes, *, file: str) -> tuple[ConfigFile | None, list[Problem]]:
    """Parse and check a config's text: every problem at once (unknown fields are warnings)."""
    data, problems = parse_json(raw, file=file)
    if data is None:
        return None, problems
    data = _as_javascript_numbers(data)
    value, more = decode_value(data, ConfigFile, file=file)
    return value, problems + more + _unknown_fields(data, file)


def read_config(path: str | Path | None = None) -> ChampollionConfig:
    """Read a config; raise `ProblemsError` listing every error (warnings are kept on the result)."""
    file = config_path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        problem = Problem(file=str(file), path="$", message=f"cannot read file: {exc.strerror or exc}",
                          hint="give the path of champollion.config.json with --config", code="io")
        raise ProblemsError([problem], summary=f"{file} is not a valid champollion config") from exc
    value, problems = decode_config(raw, file=str(file))
    if value is None or any(p.severity == "error" for p in problems):
        raise ProblemsError(problems, summary=f"{file} is not a valid champollion config")
    pairs = []
    for key, settings in value.pairs.items():
        source, target = split_pair_key(key) or ("", "")
        pairs.append(Pair(key=key, source=source, target=target, settings=settings))
    return ChampollionConfig(file=file.absolute(), input_locale=value.input_locale,
                             locales_dir=file.absolute().parent / value.locales_dir, pairs=pairs,
                             warnings=[p for p in problems if p.severity == "warning"])


def _as_javascript_numbers(data: Any) -> Any:
    """JSON numbers as JavaScript reads them: ``3.0`` is the integer 3 (so both sides accept it)."""
    if isinstance(data, float) and data.is_integer() and abs(data) <= 2**53:
        return int(data)
    if isinstance(data, dict):
        return {key: _as_javascript_numbers(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_as_javascript_numbers(value) for value in data]
    return data


def _unknown_fields(data: Any, file: str) -> list[Problem]:
    problems: list[Problem] = []

    def check(value: Any, struct: type[msgspec.Struct], at: tuple[str | int, ...]) -> None:
        if not isinstance(value, dict):
            return
        known = list(struct.__struct_encode_fields__)
        for key in value:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                hint = (f'did you mean "{close[0]}"?' if close else "remove it.") + " Known fields: " + ", ".join(known)
                problems.append(Problem(file=file, path=json_path((*at, key)), message=f'unknown field "{key}"',
                                        hint=hint, severity="warning", code="unknown-field"))

    check(data, ConfigFile, ())
    if isinstance(data, dict) and isinstance(data.get("pairs"), dict):
        for key, pair in data["pairs"].items():
            check(pair, PairSettings, ("pairs", key))
    return problems
