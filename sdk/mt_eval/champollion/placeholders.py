"""Placeholders a translation must keep verbatim: swapped for numbered sentinels, then restored.

Protected: i18next interpolation (``{{name}}``, ``{{- html}}``, ``{{count, number}}``) and nesting
(``$t(key)``), ICU/format arguments (``{count}``, ``{0}``), printf (``%s``, ``%1$d``, ``%.2f``,
``%(name)s``, ``%%``), HTML and i18next ``<Trans>`` tags (``<b>``, ``</a>``, ``<br/>``, ``<0>``) and
character references (``&nbsp;``). Each becomes ``⟦n⟧`` (U+27E6, U+27E7), which rule-based and neural
translators pass through untouched (Apertium does). Text that already looks like a sentinel is
protected too, so restoring is exact. A translation that loses, repeats or invents a sentinel is
refused: the key fails rather than being written broken. The source's leading and trailing whitespace is
kept in place of the translation's own (`keep_edges`). `bridge/vectors/champollion/placeholders.json`
holds the cases both sides must pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mt_eval.champollion.jsonfmt import js_string

# Character classes are spelled out (no \w, \d, \s) so the Node side's regular expression matches alike.
PLACEHOLDER = re.compile(
    r"\{\{[^{}]*\}\}"                                            # {{name}}, {{- html}}, {{count, number}}
    r"|\$t\([^()]*\)"                                             # $t(other.key)
    r"|\{[ \t]*[A-Za-z0-9_.-]+[ \t]*(?:,[^{}]*)?\}"               # {name}, {0}, {count, number}
    r"|%(?:\([A-Za-z0-9_.-]+\))?(?:[0-9]+\$)?[-+0#]*[0-9]*(?:\.[0-9]+)?[sdifuxXeEgGc@]"  # %s %1$s %.2f
    r"|%%"
    r"|</?[A-Za-z][A-Za-z0-9_:.-]*(?:[ \t\r\n]+[^<>]*?)?[ \t\r\n]*/?>"  # <b>, </a>, <a href="…">, <br/>
    r"|</?[0-9]+[ \t]*/?>"                                         # <0>, </0>, <1/>
    r"|&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);"       # &nbsp; &#160; &#xA0;
    r"|⟦[ \t]*[0-9]+[ \t]*⟧"                                       # text that looks like a sentinel
)
SENTINEL = re.compile(r"⟦[ \t]*([0-9]+)[ \t]*⟧")


@dataclass(frozen=True)
class Protected:
    """A text with its placeholders replaced by ``⟦0⟧``, ``⟦1⟧`` … (in order of appearance)."""

    text: str
    placeholders: tuple[str, ...]


def protect(text: str) -> Protected:
    found: list[str] = []

    def swap(match: re.Match[str]) -> str:
        found.append(match.group())
        return f"⟦{len(found) - 1}⟧"

    return Protected(PLACEHOLDER.sub(swap, text), tuple(found))


class PlaceholderError(ValueError):
    """The translation lost, repeated or invented a placeholder."""


def restore(translated: str, placeholders: tuple[str, ...]) -> str:
    """Put the placeholders back; raise `PlaceholderError` unless each sentinel appears exactly once."""
    seen: dict[int, int] = {}
    for match in SENTINEL.finditer(translated):
        index = int(match.group(1))
        seen[index] = seen.get(index, 0) + 1
    problems = []
    for index, placeholder in enumerate(placeholders):
        count = seen.pop(index, 0)
        if count == 0:
            problems.append(f"lost placeholder {placeholder}")
        elif count > 1:
            problems.append(f"repeated placeholder {placeholder} ({count} times)")
    problems.extend(f"invented placeholder ⟦{index}⟧" for index in sorted(seen))
    if problems:
        raise PlaceholderError(f"the translation {js_string(translated)} {'; '.join(problems)}")
    return SENTINEL.sub(lambda m: placeholders[int(m.group(1))], translated)


def keep_edges(source: str, translated: str) -> str:
    """The translation with the source's leading and trailing whitespace instead of its own (translators
    often drop or add a space at the edges, e.g. where a subject pronoun was dropped)."""
    lead = re.match(r"[ \t\r\n]*", source)
    trail = re.search(r"[ \t\r\n]*\Z", source)
    core = translated.strip(" \t\r\n")
    if not core:
        return translated
    return (lead.group() if lead else "") + core + (trail.group() if trail else "")


def has_words(protected: Protected) -> bool:
    """Whether anything is left to translate once placeholders are out (a letter remains)."""
    return any(ch.isalpha() for ch in SENTINEL.sub("", protected.text))
