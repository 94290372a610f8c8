"""Language pairs as people type them: ``'eng>spa'``, ``eng:spa``, ``eng-spa`` and champollion's ``en:es``.

The SDK writes a pair ``source>target`` (``supported_pairs`` in method.json, the run card, a corpus's
``language_pair``). On a command line ``>`` is the shell's output redirection — ``--pair eng>spa`` unquoted
passes ``eng`` and writes the output into a file named ``spa`` — so ``--pair`` also takes ``:``, ``->``,
``→``, and one ``-`` between two bare language codes (``eng-spa``; ``en-GB-es`` is ambiguous: use ``>`` or
``:`` there). ISO 639-1 and 639-3 codes name the same language (``en:es`` is ``eng>spa``), through the
language table champollion uses (`mt_eval.champollion.languages`).
"""

from __future__ import annotations

import os
import re

LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")
SEPARATORS = ("->", ">", "→", ":")  # "->" before ">", which it contains
EXAMPLE = "--pair 'eng>spa' (or --pair eng:spa)"


class PairError(ValueError):
    """Text that is not a language pair; the message says how to write one."""


def parse_pair(text: str) -> str:
    """``text`` as ``source>target``; raises `PairError` saying how to write it."""
    value = text.strip()
    if not value:
        raise PairError(f"an empty pair: give the source and target languages, e.g. {EXAMPLE}")
    for separator in SEPARATORS:
        if separator in value:
            source, _, target = value.partition(separator)
            return _joined(source.strip(), target.strip(), text)
    if value.count("-") == 1:
        source, _, target = value.partition("-")
        return _joined(source, target, text)
    lower = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")  # with subtags, the language itself is lowercase
    halves = [(value[:i], value[i + 1:]) for i, c in enumerate(value) if c == "-"]
    fitting = [(s, t) for s, t in halves if lower.fullmatch(s) and lower.fullmatch(t)]
    if len(fitting) == 1:
        return _joined(*fitting[0], text)
    if len(fitting) > 1:
        options = " or ".join(f"'{s}>{t}'" for s, t in fitting)
        raise PairError(f"'{text}' can be read as {options}: write it with > (quoted) or :, e.g. --pair "
                        f"'{fitting[-1][0]}>{fitting[-1][1]}'")
    hint = redirection_hint(value)
    raise PairError(f"'{text}' is not a language pair: write source and target, e.g. {EXAMPLE}" + hint)


def _joined(source: str, target: str, given: str) -> str:
    for side, code in (("source", source), ("target", target)):
        if not LANGUAGE.fullmatch(code):
            shown = f"'{code}'" if code else "nothing"
            raise PairError(f"'{given}': the {side} language is {shown}, not a language code such as eng or en; "
                            f"e.g. {EXAMPLE}")
    return f"{_normal(source)}>{_normal(target)}"


def language_code(text: str) -> str:
    """One language code as a config holds it (``ENG_us`` → ``eng-us``); raises `PairError` for anything else
    (``english``)."""
    code = text.strip()
    if not LANGUAGE.fullmatch(code):
        raise PairError(f"'{text}' is not a language code: write an ISO 639 code such as eng or en (subtags after "
                        "a -: pt-BR)")
    return _normal(code)


def _normal(code: str) -> str:
    """The primary language in lowercase, subtags as written, ``-`` between them (``ENG_us`` → ``eng-us``)."""
    primary, *subtags = re.split(r"[-_]", code)
    return "-".join([primary.lower(), *subtags])


def redirection_hint(value: str) -> str:
    """When the shell took ``>CODE`` as a redirection (standard output is a file named like a language code),
    the words that say so; else ""."""
    try:
        target = os.readlink("/proc/self/fd/1")
    except OSError:
        return ""
    name = os.path.basename(target)
    if not os.path.isfile(target) or not re.fullmatch(r"[a-z]{2,3}", name):
        return ""
    return (f" (the shell read the unquoted > as a redirection: this command's output is going into a file "
            f"named {name}; quote the pair, --pair '{value}>{name}', and remove the file {name})")


def same_languages(a: str, b: str) -> bool:
    """Whether two pairs name the same languages (``en>es`` and ``eng>spa`` do; so do ``pt-BR`` and ``por``
    only with the same subtags)."""
    from mt_eval.champollion.languages import language_candidates

    if a == b:
        return True
    try:
        sides = list(zip(parse_pair(a).split(">"), parse_pair(b).split(">"), strict=True))
    except PairError:
        return False
    return all(set(language_candidates(x)) & set(language_candidates(y)) for x, y in sides)


def supported_form(pair: str, supported: list[str]) -> str | None:
    """The method's own spelling of ``pair`` (``en>es`` → ``eng>spa`` when it supports that), ``pair`` itself
    when the method supports any pair, or None when it does not support it."""
    if not supported or pair in supported:
        return pair
    return next((s for s in supported if same_languages(pair, s)), None)


def quoted(pairs: list[str]) -> str:
    """Pairs as a user would type them: ``'eng>spa', 'spa>eng'``."""
    return ", ".join(f"'{p}'" for p in pairs)
