"""Placeholders a translation must keep verbatim: swapped for numbered sentinels, then restored.

Protected: i18next interpolation (``{{name}}``, ``{{- html}}``, ``{{count, number}}``, with a ``$`` written
before it: ``${{amount}}``) and nesting (``$t(key)``), ICU/format arguments (``{count}``, ``{0}``; auto-numbered
``{}``, ``{:.2f}``, ``{!r}``; Polyglot's ``%{name}``, ``${name}``), vue-i18n linked messages (``@:common.name``,
``@.lower:key``), printf (``%s``, ``%1$d``, ``%.2f``, ``%*d``, ``%.*f``, ``%(name)s``, ``%%``), HTML and i18next
``<Trans>`` tags (``<b>``, ``</a>``, ``<br/>``, ``<0>``), character references (``&nbsp;``) and the destination of
a Markdown link (``[text](/docs/user-guide)``: the text is translated). Each becomes ``⟦n⟧`` (U+27E6, U+27E7),
which rule-based and neural translators pass through untouched (Apertium does). Text that already looks like a
sentinel is protected too, so restoring is exact. A translation that loses, repeats or invents a sentinel, puts a
closing tag before its opening tag, or reorders printf conversions or auto-numbered fields that take their
arguments in the order written (``%s``, ``%*d``; ``{}``, ``{:.2f}``: `_reordered`), is refused: the key fails
rather than being written broken. The source's leading and trailing whitespace is kept in place of the
translation's own (`keep_edges`).
`bridge/vectors/champollion/placeholders.json` holds the cases both sides must pass.

A text that holds an ICU ``plural``, ``select`` or ``selectordinal`` message (`icu`) has its syntax
(``{count, plural, one {``, ``} other {``, ``}}``) and its arguments (``#``, ``{name}``) protected as
placeholders, so that only the texts of its branches are translated; the translation must then read as
an ICU message with the same skeleton (argument names, keywords, selectors), or it is refused too. An
apostrophe the translation puts right before a protected ``{``, ``}`` or ``#`` is doubled as it is restored
(``d'{name}`` → ``d''{name}``), so that ICU shows it rather than reading it as the start of quoted text; the
other way, an apostrophe the message escapes (``It''s``) is sent as the apostrophe it stands for (``It's``).
A text with simple arguments only (``It''s {name}``) cannot be told from another format's by itself:
``protect(text, icu=True)`` reads it as an ICU message all the same (the text of a locale file that holds ICU
messages: `holds_icu_message`), with the same rules for its apostrophes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from mt_eval.champollion.icu import IcuSyntaxError, IcuTooDeep, Message, parse
from mt_eval.champollion.jsonfmt import js_string

# Character classes are spelled out (no \w, \d, \s) so the Node side's regular expression matches alike. Every
# alternative starts with one fixed character (not a class, an optional one or a lookbehind), so the scan skips the
# text between such characters at once: one that did not made every locale string's scan ten times slower.
# {name}, {0}, {count, number}, {amount:.2f}, {0!r}, Angular's {$INTERPOLATION}; auto-numbered {}, {:.2f}, {!r}
_ARGUMENT = r"\{(?:[ \t]*\$?[A-Za-z0-9_.-]+[ \t]*(?:[,:!][^{}]*)?|[:!][^{}]*)?\}"
_PRINTF_WIDTH = r"(?:\*(?:[0-9]+\$)?|[0-9]*)(?:\.(?:\*(?:[0-9]+\$)?|[0-9]+))?"  # 10 .2 * .* *2$ (star: an argument)
_PRINTF_LENGTH_AND_TYPE = r"(?:hh|h|ll|l|L|q|j|z|t)?[sdifuxXeEgGc@]"
PLACEHOLDER = re.compile(
    r"\{\{[^{}]*\}\}"                                            # {{name}}, {{- html}}, {{count, number}}
    r"|\$\{\{[^{}]*\}\}"                                          # ${{amount}}: a $ written before {{amount}}
    r"|\$t\([^()]*\)"                                             # $t(other.key)
    rf"|{_ARGUMENT}|%{_ARGUMENT}|\${_ARGUMENT}"                     # {name}; Polyglot's and i18n-js's %{name}, ${name}
    r"|@(?:\.[A-Za-z]+)?:(?:\([^()]*\)|\{[^{}]*\}|[A-Za-z0-9_|/.-]*[A-Za-z0-9_|/-])"  # vue-i18n @:key, @.lower:key
    r'|\((?<=\]\()[^() \t\r\n]*(?:[ \t]+"[^"\r\n]*")?\)'            # a Markdown link's (url "title") after its [text]
    rf"|%(?:\([A-Za-z0-9_.-]+\))?(?:[0-9]+\$)?[-+0#]*{_PRINTF_WIDTH}{_PRINTF_LENGTH_AND_TYPE}"  # %s %1$s %.2f %ld %*d
    r"|%%"
    r"|</?[A-Za-z][A-Za-z0-9_:.-]*(?:[ \t\r\n]+[^<>]*?)?[ \t\r\n]*/?>"  # <b>, </a>, <a href="…">, <br/>
    r"|</?[0-9]+[ \t]*/?>"                                         # <0>, </0>, <1/>
    r"|&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);"       # &nbsp; &#160; &#xA0;
    r"|⟦[ \t]*[0-9]+[ \t]*⟧"                                       # text that looks like a sentinel
)
SENTINEL = re.compile(r"⟦[ \t]*([0-9]+)[ \t]*⟧")
TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_:.-]*|[0-9]+)(?:[ \t\r\n][^<>]*)?>")  # a placeholder that is a tag
# a printf conversion that takes the next arguments (%s, %.2f, %ld, %*d), not a numbered (%1$s) or named (%(name)s)
# one; a format field that does so ({}, {:.2f}, {!r}), not a numbered ({0}) or named ({name}) one
IN_TURN = re.compile(r"%[-+0#]*(?:\*|[0-9]*)(?:\.(?:\*|[0-9]+))?" + _PRINTF_LENGTH_AND_TYPE)
AUTO_NUMBERED = re.compile(r"\{(?:[:!][^{}]*)?\}")


@dataclass(frozen=True)
class Protected:
    """A text with its placeholders replaced by ``⟦0⟧``, ``⟦1⟧`` … (in order of appearance), and the skeleton
    of its ICU plural, select and selectordinal messages (None: it is not read as ICU; "": an ICU message without
    any)."""

    text: str
    placeholders: tuple[str, ...]
    icu: str | None = None
    problem: str | None = None  # why it cannot be sent at all (ICU messages nested too deep)
    apostrophes_doubled: bool = False  # its ICU text escaped apostrophes (It''s), sent unescaped: restore doubles


def protect(text: str, *, icu: bool = False) -> Protected:
    """``text`` protected; with ``icu``, a text that reads as ICU is an ICU message even without a plural, select
    or selectordinal message (``It''s {name}``)."""
    found: list[str] = []

    def swap(match: re.Match[str]) -> str:
        found.append(match.group())
        return f"⟦{len(found) - 1}⟧"

    try:
        message = _icu_message(text, refuse_deep=True, simple=icu)
    except IcuTooDeep as exc:
        return Protected(text, (), None, f"{exc}: it cannot be translated with its placeholders kept; split it")
    if message is None:
        return Protected(PLACEHOLDER.sub(swap, text), tuple(found))
    pieces = []
    doubled = False
    for kind, piece in message.parts:
        if kind == "text":
            sent = PLACEHOLDER.sub(swap, piece)
            pieces.append(_apostrophes_unescaped(sent, piece))
            doubled = doubled or pieces[-1] != sent
        else:
            found.append(piece)
            pieces.append(f"⟦{len(found) - 1}⟧")
    return Protected("".join(pieces), tuple(found), message.skeleton, apostrophes_doubled=doubled)


def _icu_message(text: str, *, refuse_deep: bool = False, simple: bool = False) -> Message | None:
    """``text`` as an ICU message, when it holds a plural, select or selectordinal one (or, ``simple``, any) and
    reads as ICU (``refuse_deep``: `IcuTooDeep` for one nested too deep, rather than None)."""
    if not simple and "plural" not in text and "select" not in text:
        return None
    try:
        message = parse(text)
    except IcuTooDeep:
        if refuse_deep:
            raise
        return None
    except IcuSyntaxError:
        return None
    return message if message.skeleton or simple else None


def holds_icu_message(text: str) -> bool:
    """Whether ``text`` holds an ICU plural, select or selectordinal message that reads as ICU: a locale file with
    one is written in ICU, so its other texts are ICU messages too (`protect`'s ``icu``)."""
    return _icu_message(text) is not None


def read_as_icu_for_its_file(text: str) -> bool:
    """Whether ``text``, in a locale file that holds ICU messages, is read as ICU only because of its file, and read
    otherwise than as plain text: it reads as an ICU message without a plural, select or selectordinal message of
    its own, and holds a ``{`` or an apostrophe (ICU reads nothing else apart: ``Hello`` is sent, and written, the
    same either way)."""
    if "{" not in text and "'" not in text:
        return False
    message = _icu_message(text, simple=True)
    return message is not None and not message.skeleton


_OPENS_QUOTE = re.compile(r"'[{}#|]")  # an apostrophe that starts quoted text in ICU


def _apostrophes_unescaped(sent: str, piece: str) -> str:
    """A text piece of an ICU message as it is sent (``sent``: its placeholders swapped), with each apostrophe
    written as ICU escapes it (``It''s``) made the apostrophe it stands for (``It's``), so the method reads the
    text a user sees; `restore` doubles them again (``apostrophes_doubled``). A piece that quotes text
    (``'{'``), or where the unescaped text would hold two apostrophes in a row, is sent as it is."""
    if "''" not in sent or _OPENS_QUOTE.search(piece.replace("''", "")):
        return sent
    unescaped = sent.replace("''", "'")
    return sent if "''" in unescaped else unescaped


class PlaceholderError(ValueError):
    """The translation lost, repeated or invented a placeholder, or changed an ICU message's skeleton."""


def restore(translated: str, placeholders: tuple[str, ...], icu: str | None = None,
            apostrophes_doubled: bool = False) -> str:
    """Put the placeholders back; raise `PlaceholderError` unless each sentinel appears exactly once and, given
    the source's ICU skeleton ``icu`` (`Protected.icu`; "" too is one), the result has that skeleton. With
    ``apostrophes_doubled`` (the source escaped its apostrophes, `Protected.apostrophes_doubled`), each apostrophe
    of the translation's text is written ``''`` as the source wrote its own."""
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
    if not problems:
        problems = _tags_reversed(translated, placeholders) + _reordered(translated, placeholders)
    if problems:
        raise PlaceholderError(f"the translation {js_string(translated)} {'; '.join(problems)}")
    restored = SENTINEL.sub(lambda m: placeholders[int(m.group(1))],
                            translated if icu is None else _apostrophes_kept(translated, placeholders,
                                                                             apostrophes_doubled))
    if icu is not None:
        try:
            found = parse(restored).skeleton
        except IcuSyntaxError as exc:
            raise PlaceholderError(f"the translation {js_string(translated)} breaks the ICU message "
                                   f"{icu or 'of its source'}: {exc}") from None
        if found != icu:
            raise PlaceholderError(f"the translation {js_string(translated)} changed the ICU message "
                                   f"{icu or 'of its source'} into "
                                   f"{found or 'a text without a plural, select or selectordinal message'}")
    return restored


def _tags_reversed(translated: str, placeholders: tuple[str, ...]) -> list[str]:
    """A closing tag the translation puts before its opening one (``</b>…<b>``), for each pair of the source's
    tags (an opening tag and the closing tag of its name that ends it; a tag never closed, such as ``<br>``, pairs
    with nothing). Tags and arguments may otherwise move: word order differs between languages."""
    where = {int(m.group(1)): m.start() for m in SENTINEL.finditer(translated)}
    opened: list[tuple[str, int]] = []
    problems = []
    for index, placeholder in enumerate(placeholders):
        tag = TAG.fullmatch(placeholder)
        if tag is None or placeholder.endswith("/>"):
            continue
        name = (tag.group(2) or "").lower()
        if not tag.group(1):
            opened.append((name, index))
            continue
        names = [n for n, _ in opened]
        if name in names:
            depth = len(names) - 1 - names[::-1].index(name)
            start = opened[depth][1]
            del opened[depth:]
            if where[index] < where[start]:
                problems.append(f"put the closing tag {placeholder} before its opening tag {placeholders[start]}")
    return problems


def _reordered(translated: str, placeholders: tuple[str, ...]) -> list[str]:
    """The source's printf conversions that take their arguments in the order written (``%d … %s``), and so its
    auto-numbered format fields (``{} … {}``), when the translation does not keep their order: each would be given
    another's argument. Numbered ones (``%1$d``, ``{0}``) may move."""
    where = {int(m.group(1)): m.start() for m in SENTINEL.finditer(translated)}
    problems = []
    for kind, numbered in ((IN_TURN, _printf_numbered), (AUTO_NUMBERED, _fields_numbered)):
        in_turn = [index for index, placeholder in enumerate(placeholders) if kind.fullmatch(placeholder)]
        if sorted(in_turn, key=where.__getitem__) != in_turn:
            written = [placeholders[index] for index in in_turn]
            problems.append(f"reordered {' and '.join(written)}, which take their arguments in the order they are "
                            f"written (numbered, {' and '.join(numbered(written))}, they may move)")
    return problems


def _printf_numbered(conversions: list[str]) -> list[str]:
    """printf conversions that take their arguments in turn, numbered as they take them: ``%s %*d`` → ``%1$s
    %3$*2$d`` (a ``*`` width or precision takes an argument before its conversion does)."""
    numbered, taken = [], 0
    for conversion in conversions:
        body = ""
        for char in conversion[1:]:
            if char == "*":
                taken += 1
                body += f"*{taken}$"
            else:
                body += char
        taken += 1
        numbered.append(f"%{taken}${body}")
    return numbered


def _fields_numbered(fields: list[str]) -> list[str]:
    """Auto-numbered format fields, numbered: ``{} {:.2f} {!r}`` → ``{0} {1:.2f} {2!r}``."""
    return [f"{{{number}{field[1:]}" for number, field in enumerate(fields)]


# An apostrophe of the translation's text right before a sentinel: not one of a pair already, nor the first of two
# around it (``'{literal}'``, a literal the source quoted and the translation kept)
_QUOTES = ("{", "}", "#", "|")  # what an apostrophe before it starts quoted text with, in ICU


def _apostrophes_kept(translated: str, placeholders: tuple[str, ...], doubled: bool = False) -> str:
    """The translation of an ICU message with each apostrophe of its text that would start quoted text once the
    placeholder after it is back (``{``, ``}``, ``#`` or ``|``) doubled: ICU reads ``''`` as the apostrophe the
    translator wrote (French ``d'{name}``, ``l'#``), where ``'{`` would quote the argument away. The text is read
    as ICU reads it: an apostrophe that closes quoted text (``'#'`` before ``{id}``) is left alone, and so is one
    that quotes a placeholder whole (``'⟦0⟧'``). With ``doubled``, every apostrophe that stands for itself is
    written ``''``."""
    if "'" not in translated:
        return translated
    out: list[str] = []
    at, quoted, end = 0, False, len(translated)
    while at < end:
        char = translated[at]
        if char != "'":
            out.append(char)
            at += 1
        elif translated.startswith("''", at):  # an apostrophe, written as ICU writes it
            out.append("''")
            at += 2
        elif quoted or translated[at + 1:at + 2] in _QUOTES:  # closes quoted text, or opens it
            quoted = not quoted
            out.append("'")
            at += 1
        else:
            sentinel = SENTINEL.match(translated, at + 1)
            opens = sentinel is not None and placeholders[int(sentinel.group(1))][:1] in _QUOTES
            if sentinel is not None and opens and translated[sentinel.end():sentinel.end() + 1] == "'":
                quoted, opens = True, False  # ('⟦0⟧': the placeholder quoted whole)
            out.append("''" if opens or (doubled and not quoted) else "'")
            at += 1
    return "".join(out)


def keep_edges(source: str, translated: str) -> str:
    """The translation with the source's leading and trailing whitespace instead of its own (translators
    often drop or add a space at the edges, e.g. where a subject pronoun was dropped); so too each branch of
    an ICU message, when the translation's message has the source's skeleton."""
    core = translated.strip(" \t\r\n")
    if not core:
        return translated
    lead, trail = _edges(source)
    return lead + _keep_branch_edges(source, core) + trail


def _edges(text: str) -> tuple[str, str]:
    """The leading and the trailing whitespace of ``text``."""
    lead = re.match(r"[ \t\r\n]*", text)
    trail = re.search(r"[ \t\r\n]*\Z", text)
    return (lead.group() if lead else ""), (trail.group() if trail else "")


def _keep_branch_edges(source: str, translated: str) -> str:
    ours, theirs = _icu_message(source), _icu_message(translated)
    if ours is None or theirs is None or ours.skeleton != theirs.skeleton:
        return translated
    edits = []
    for (s_start, s_end), (start, end) in zip(ours.branches, theirs.branches, strict=True):
        branch = translated[start:end]
        if branch.strip(" \t\r\n"):
            lead, trail = _edges(source[s_start:s_end])
            old_lead, old_trail = _edges(branch)
            edits += [(start, start + len(old_lead), lead), (end - len(old_trail), end, trail)]
    for start, end, text in sorted(edits, reverse=True):
        translated = translated[:start] + text + translated[end:]
    return translated


def has_words(protected: Protected) -> bool:
    """Whether anything is left to translate once placeholders are out: a letter, or a character this Python's
    Unicode does not know yet (a letter of a script added since, Nag Mundari say, which Node's newer Unicode
    knows: both send it, so both tools write the same files)."""
    return any(ch.isalpha() or (ch > "\x7f" and unicodedata.category(ch) == "Cn")
               for ch in SENTINEL.sub("", protected.text))
