"""Locale codes (``en``, ``pt-BR``) to the language codes of a method's pairs (``eng>spa``, ``en>es``).

The table (ISO 639-1 → ISO 639-3, and CLDR plural categories) is ``languages.json`` of the Node package,
read by both sides. A locale's candidates, most specific first, are: its ISO 639-3 form with subtags, its
ISO 639-1 form with subtags, then both without subtags (``pt-BR`` → ``por-BR``, ``pt-BR``, ``por``, ``pt``).
A plugin that declares ``supported_pairs`` gets the first supported combination (target candidates
outermost); one that supports any pair gets the first candidates. A pair's ``sourceLanguage`` and
``targetLanguage`` override the mapping. `bridge/vectors/champollion/languages.json` pins this down.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

LOCALE_PATTERN = r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$"
PLURAL_ORDER = ("zero", "one", "two", "few", "many", "other")


class LanguageError(ValueError):
    """No language pair of the method fits the locales; the message says what was tried."""


def table_path() -> Path:
    """``languages.json``: in the packaged Node files, or in the source tree."""
    from mt_eval.node_package import node_package_file

    return node_package_file("lib", "champollion", "languages.json")


@functools.cache
def _table() -> dict[str, Any]:
    return json.loads(table_path().read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@functools.cache
def _iso1_of() -> dict[str, str]:
    return {three: one for one, three in _table()["iso639"].items()}


def normalize_locale(locale: str) -> str:
    """``pt_br`` → ``pt-BR``: ``-`` separators, lowercase language, uppercase region, titlecase script."""
    parts = re.split(r"[-_]", locale)
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 2 and part.isalpha():
            out.append(part.upper())
        elif len(part) == 4 and part.isalpha():
            out.append(part[0].upper() + part[1:].lower())
        else:
            out.append(part.lower())
    return "-".join(out)


def same_locale(a: str, b: str) -> bool:
    return normalize_locale(a) == normalize_locale(b)


def language_candidates(locale: str) -> list[str]:
    """The language codes a locale may appear as in a method's pairs, most specific first."""
    normal = normalize_locale(locale)
    primary, _, rest = normal.partition("-")
    iso3 = _table()["iso639"].get(primary) if len(primary) == 2 else primary
    iso1 = primary if len(primary) == 2 else _iso1_of().get(primary)
    suffix = f"-{rest}" if rest else ""
    found: list[str] = []
    for code in (iso3, iso1):
        if code and rest and f"{code}{suffix}" not in found:
            found.append(f"{code}{suffix}")
    for code in (iso3, iso1):
        if code and code not in found:
            found.append(code)
    return found


def pair_languages(source_locale: str, target_locale: str, supported_pairs: list[str], *,
                   source_language: str | None = None, target_language: str | None = None) -> tuple[str, str]:
    """The (source_lang, target_lang) of the RunConfig for a locale pair; raise `LanguageError`."""
    sources = [source_language] if source_language else language_candidates(source_locale)
    targets = [target_language] if target_language else language_candidates(target_locale)
    if not supported_pairs:
        return sources[0], targets[0]
    for target in targets:
        for source in sources:
            if f"{source}>{target}" in supported_pairs:
                return source, target
    tried = ", ".join(f"{s}>{t}" for t in targets for s in sources)
    raise LanguageError(f"the method supports {', '.join(supported_pairs)}; none fits {source_locale}:{target_locale} "
                        f"(tried {tried})")


def plural_categories(locale: str, kind: str = "cardinal") -> list[str] | None:
    """The CLDR plural categories of a locale's language (``kind``: cardinal or ordinal); None if unknown."""
    plurals = _table()["plurals"]
    normal = normalize_locale(locale)
    primary = normal.partition("-")[0]
    for key in (normal, primary, _iso1_of().get(primary, "")):
        if key in plurals:
            return list(plurals[key][0 if kind == "cardinal" else 1])
    return None
