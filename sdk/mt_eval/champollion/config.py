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

Pair keys are ``src:tgt``, ``src->tgt`` or ``src→tgt``; every pair translates from ``inputLocale``, which may be
left out when every pair names the same source locale (``{"version": 3, "pairs": {"en:crk": {...}}}``). Per pair:
``methodPlugin`` (required: a plugin name under ``.champollion/methods/``, or a relative path), ``model``,
``temperature``, ``batchSize`` (default 16), ``timeoutS`` (seconds per string before a call fails; default the
RunConfig's) and ``sourceLanguage``/``targetLanguage`` (the method's language codes, when the built-in mapping
does not fit). Unknown fields are warnings; bad JSON and wrong types are
errors located by their JSON path. A config with errors is refused saying them all, and its warnings with them.
The Node side (``lib/champollion/config.js``) checks the same file with the generated schema
``bridge/schemas/champollion-config.schema.json`` and these rules, and reports the same problems at the same
paths (`bridge/vectors/champollion/config.json`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from mt_eval.champollion.jsonfmt import js_string
from mt_eval.champollion.languages import LOCALE_PATTERN, normalize_locale
from mt_eval.errors import ExpectedError
from mt_eval.field_words import described
from mt_eval.problems import Finding, Problem, ProblemsError
from mt_eval.records import LanguageCode
from mt_eval.strict import StrictStruct, decode_json

CONFIG_FILE = "champollion.config.json"
CONFIG_VERSION = 3

LocaleCode = Annotated[str, described(
    pattern=LOCALE_PATTERN, pattern_means="a locale code", hint='use a locale code such as "en", "es" or "pt-BR"')]
_PAIR_SEPARATORS = ("->", "→", ":")
_LOCALE = re.compile(LOCALE_PATTERN)


class PairSettings(StrictStruct, rename="camel", forbid_unknown_fields=False, kw_only=True):
    """How one language pair is translated."""

    unknown_fields_are: ClassVar[str] = "warning"

    method_plugin: Annotated[str, msgspec.Meta(min_length=1)]
    model: str | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    batch_size: Annotated[int, msgspec.Meta(ge=1)] = 16
    timeout_s: Annotated[float, msgspec.Meta(
        gt=0, description="seconds the method may take per string before a call fails")] | None = None
    source_language: LanguageCode | None = None
    target_language: LanguageCode | None = None


class ChampollionConfigFile(StrictStruct, rename="camel", forbid_unknown_fields=False, kw_only=True):
    """``champollion.config.json`` as written (version 3)."""

    unknown_fields_are: ClassVar[str] = "warning"

    version: int
    input_locale: Annotated[LocaleCode, msgspec.Meta(
        description="The locale every pair translates from; by default the source locale of the pair keys.")
    ] | None = None
    pairs: dict[str, PairSettings]
    locales_dir: Annotated[str, msgspec.Meta(min_length=1)] = "locales"
    schema: str | None = msgspec.field(default=None, name="$schema")

    def source_locale(self) -> str | None:
        """``inputLocale``, or the source locale every pair key names (None when there is none, or several)."""
        if self.input_locale is not None:
            return self.input_locale
        sources = [parsed[0] for key in self.pairs if (parsed := split_pair_key(key)) is not None]
        return sources[0] if sources and len({normalize_locale(s) for s in sources}) == 1 else None

    def findings(self) -> Iterator[Finding]:
        if self.version != CONFIG_VERSION:
            yield Finding(("version",), f"version {self.version} is not supported: this reader understands "
                          f"champollion.config.json version {CONFIG_VERSION}",
                          "write the file in the version 3 format (see the README)", code="version")
        if not self.pairs:
            yield Finding(("pairs",), "no pairs: nothing will be translated", 'add one, e.g. "en:es": '
                          '{"methodPlugin": "my-method"}', severity="warning", code="empty")
        input_locale = self.source_locale()
        if input_locale is None:
            sources = list(dict.fromkeys(p[0] for key in self.pairs if (p := split_pair_key(key)) is not None))
            if len(sources) > 1:
                yield Finding(("inputLocale",), f"no inputLocale, and the pairs translate from {', '.join(sources)}",
                              'add "inputLocale": the locale every pair translates from', code="input-locale")
                return
            if not self.pairs:
                yield Finding(("inputLocale",), "no inputLocale, and no pair key to take it from",
                              'add "inputLocale": the locale of your source strings, e.g. "en"',
                              code="input-locale")
                return
        seen: dict[tuple[str, str], str] = {}
        for key in self.pairs:
            parsed = split_pair_key(key)
            if parsed is None:
                yield Finding(("pairs", key), *pair_key_problem(key), code="pair-key")
                continue
            source, target = (normalize_locale(p) for p in parsed)
            assert input_locale is not None  # a valid pair key gives one when inputLocale is absent
            if source != normalize_locale(input_locale):
                yield Finding(("pairs", key), f"translates from {parsed[0]}, but inputLocale is {input_locale}",
                              f'every pair starts from the input locale: "{input_locale}:{parsed[1]}"',
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


def pair_key_problem(key: str) -> tuple[str, str]:
    """Why ``key`` is no pair of locales, and the fix: a key of the form ``src:tgt`` names the halves that are
    not locale codes, as a bad ``inputLocale`` is named."""
    separator = next((s for s in _PAIR_SEPARATORS if s in key), None)
    parts = [p.strip() for p in key.split(separator)] if separator else []
    if len(parts) == 2 and all(parts) and not any(s in p for s in _PAIR_SEPARATORS for p in parts):
        bad = [js_string(p) for p in parts if not _LOCALE.match(p)]
        said = f"{bad[0]} is not a locale code" if len(bad) == 1 else f"{bad[0]} and {bad[1]} are not locale codes"
        return said, 'use a locale code such as "en", "es" or "pt-BR"'
    return f"{js_string(key)} is not a language pair", 'write it as "src:tgt" (also "src->tgt" or "src→tgt"), ' \
        'e.g. "en:es"'


@dataclass(frozen=True)
class Pair:
    """One pair of a config: its key as written, its locales and settings."""

    key: str
    source: str
    target: str
    settings: PairSettings


class ChampollionConfigError(ProblemsError):
    """The config has errors; ``problems`` lists every one (and the warnings). Its message says them all, the errors
    and then the warnings found with them: an unknown field (``inputLocal``) is often the fix of an error (no
    ``inputLocale``), and an empty ``pairs`` is as much a problem as the ``inputLocale`` it leaves nothing to take
    from. As Node's ``ChampollionConfigError``."""

    def __init__(self, file: Path, problems: list[Problem]) -> None:
        super().__init__(problems, summary=f"{file} is not a valid champollion config")
        warnings = [p.render() for p in self.problems if p.severity == "warning"]
        if warnings:
            self.args = ("\n".join([str(self), *warnings]),)


class LocalesDirError(ExpectedError):
    """``localesDir`` names no directory; the message names it, the config and the fix."""


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

    def check_locales_dir(self) -> None:
        """Raise `LocalesDirError` when ``localesDir`` is not a directory (before anything else is done there)."""
        if self.locales_dir.is_dir():
            return
        what = "is not a directory" if os.path.lexists(self.locales_dir) else "does not exist"
        raise LocalesDirError(f'localesDir {self.locales_dir} {what}: set "localesDir" in {self.file} to the directory '
                              f"that holds the locale files ({self.input_locale}/*.json or {self.input_locale}.json), "
                              "relative to the config")

    def pair(self, key: str) -> Pair:
        """The pair written ``key`` (any separator, ``>`` too); KeyError listing the pairs when there is none."""
        wanted = split_pair_key(key) or split_pair_key(key.replace(">", ":", 1))
        for pair in self.pairs:
            if pair.key == key or (wanted is not None and (normalize_locale(pair.source), normalize_locale(
                    pair.target)) == (normalize_locale(wanted[0]), normalize_locale(wanted[1]))):
                return pair
        raise KeyError(f"{self.file} has no pair {key}; its pairs: {', '.join(p.key for p in self.pairs) or 'none'}")


def config_path(path: str | Path | None) -> Path:
    """The config file for ``path``: the file itself, or ``champollion.config.json`` in a directory."""
    chosen = Path(path) if path is not None else Path(CONFIG_FILE)
    return chosen / CONFIG_FILE if chosen.is_dir() else chosen


def decode_config(raw: bytes, *, file: str) -> tuple[ChampollionConfigFile | None, list[Problem]]:
    """Parse and check a config's text: every problem at once (unknown fields are warnings)."""
    return decode_json(raw, ChampollionConfigFile, file=file)


def read_config(path: str | Path | None = None, *, flag: str = "--config") -> ChampollionConfig:
    """Read a config; raise `ChampollionConfigError` listing every error, and the warnings with them (a valid one
    keeps its warnings on the result). ``flag`` is the option that gives its path, named in the fix when it cannot
    be read."""
    file = config_path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        hint = (f"make it readable (chmod u+r {file})" if isinstance(exc, PermissionError)
                else f"give the path of champollion.config.json with {flag}")
        problem = Problem(file=str(file), path="$", message=f"cannot read file: {exc.strerror or exc}", hint=hint,
                          code="io")
        raise ChampollionConfigError(file, [problem]) from exc
    value, problems = decode_config(raw, file=str(file))
    if value is None or any(p.severity == "error" for p in problems):
        raise ChampollionConfigError(file, problems)
    pairs = []
    for key, settings in value.pairs.items():
        source, target = split_pair_key(key) or ("", "")
        pairs.append(Pair(key=key, source=source, target=target, settings=settings))
    input_locale = value.source_locale()
    assert input_locale is not None  # a rule reports a config it cannot be derived for
    absolute = Path(os.path.abspath(file))  # ("../x" resolved in what is said, as Node's path.resolve)
    return ChampollionConfig(file=absolute, input_locale=input_locale,
                             locales_dir=Path(os.path.abspath(absolute.parent / value.locales_dir)), pairs=pairs,
                             warnings=[p for p in problems if p.severity == "warning"])
