"""ICU MessageFormat ``plural``, ``select`` and ``selectordinal`` messages: their syntax, and their skeleton.

``{count, plural, offset:1 =0 {no items} one {# item} other {# items}}`` is read (`parse`) into parts: its
syntax (``{count, plural, offset:1 =0 {``, ``} one {``, ``}}``), which `placeholders.protect` keeps out of
the translation as it keeps placeholders, the texts of its branches, which are translated, and the
arguments inside them (``#``, ``{name}``, ``{n, number}``), which are placeholders. Its skeleton — argument
names, ``plural``/``select``/``selectordinal``, ``offset:``, the selectors in order, and the messages
nested in each branch — is written ``{count, plural, offset:1 =0 {…} one {…} other {…}}``; a translation
must keep it (`placeholders.restore`). Apostrophes quote as in ICU: ``''`` is an apostrophe, and ``'``
before ``{``, ``}`` (or ``#`` in a plural branch) starts quoted text, up to the next ``'``. The Node side
(``lib/champollion/icu.js``) reads alike; ``bridge/vectors/champollion/placeholders.json`` holds the cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

COMPLEX = ("plural", "select", "selectordinal")
SPACE = " \t\r\n"
NOT_NAME = SPACE + "{}',#"

Kind = Literal["text", "syntax", "argument"]


MAX_NESTING = 50  # plural, select and selectordinal messages inside one another, at most (Python and Node alike)


class IcuSyntaxError(ValueError):
    """The text is not an ICU message: the reason, in a few words."""


class IcuTooDeep(IcuSyntaxError):
    """The text nests ICU messages deeper than `MAX_NESTING`: it cannot be translated safely (nor read without
    exhausting the stack), so its key fails rather than being sent as plain text."""


@dataclass
class Message:
    """A text read as an ICU message: its parts, in order, the skeleton of its complex arguments, and where
    the message of each of their branches starts and ends in the text (in the order they start)."""

    parts: list[tuple[Kind, str]] = field(default_factory=list)
    skeleton: str = ""
    branches: list[tuple[int, int]] = field(default_factory=list)


def parse(text: str) -> Message:
    """``text`` read as an ICU message; `IcuSyntaxError` when it cannot be."""
    reader = _Reader(text)
    skeleton = reader.message(nested=False, plural=False)
    return Message(reader.parts, skeleton, reader.branches)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.parts: list[tuple[Kind, str]] = []
        self.branches: list[tuple[int, int]] = []
        self.depth = 0

    def add(self, kind: Kind, piece: str) -> None:
        if self.parts and self.parts[-1][0] == kind and kind != "argument":
            self.parts[-1] = (kind, self.parts[-1][1] + piece)
        else:
            self.parts.append((kind, piece))

    def message(self, *, nested: bool, plural: bool) -> str:
        """Read up to the ``}`` that closes a branch (``nested``) or to the end; the skeletons found in it."""
        text = self.text
        special = "{}'#" if plural else "{}'"
        found: list[str] = []
        while self.at < len(text):
            char = text[self.at]
            if char == "}":
                if nested:
                    return " ".join(found)
                raise IcuSyntaxError("a } closes nothing")
            if char == "{":
                skeleton = self.argument(plural)
                if skeleton:
                    found.append(skeleton)
            elif char == "#" and plural:
                self.add("argument", "#")
                self.at += 1
            elif char == "'":
                self.quoted(plural)
            else:
                start = self.at
                while self.at < len(text) and text[self.at] not in special:
                    self.at += 1
                self.add("text", text[start:self.at])
        if nested:
            raise IcuSyntaxError("a { is not closed")
        return " ".join(found)

    def quoted(self, plural: bool) -> None:
        text, start = self.text, self.at
        after = text[start + 1:start + 2]
        if after == "'":
            self.at += 2
        elif after in ("{", "}") or (after == "#" and plural):
            self.at += 1
            while self.at < len(text):
                if text[self.at] == "'":
                    if text[self.at + 1:self.at + 2] != "'":
                        self.at += 1
                        break
                    self.at += 1
                self.at += 1
        else:
            self.at += 1
        self.add("text", text[start:self.at])

    def space(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in SPACE:
            self.at += 1

    def word(self) -> str:
        start = self.at
        while self.at < len(self.text) and self.text[self.at] not in NOT_NAME:
            self.at += 1
        return self.text[start:self.at]

    def expect(self, char: str, reason: str) -> None:
        if self.text[self.at:self.at + 1] != char:
            raise IcuSyntaxError(reason if self.at < len(self.text) else "a { is not closed")
        self.at += 1

    def argument(self, plural: bool) -> str:
        """Read ``{name}``, ``{name, type…}`` or a complex argument from its ``{``; its skeleton ("" for an
        argument that is not plural, select or selectordinal)."""
        start = self.at
        self.at += 1
        self.space()
        name = self.word()
        if not name:
            raise IcuSyntaxError("an argument without a name")
        self.space()
        kind = ""
        if self.text[self.at:self.at + 1] == ",":
            self.at += 1
            self.space()
            kind = self.word()
            self.space()
        if kind not in COMPLEX or self.text[self.at:self.at + 1] != ",":
            self.skip_style()
            self.add("argument", self.text[start:self.at])
            return ""
        self.at += 1
        self.space()
        offset = ""
        if kind != "select" and self.text.startswith("offset:", self.at):
            self.at += len("offset:")
            self.space()
            offset = self.word()
            if not offset:
                raise IcuSyntaxError(f"offset: without a number in {{{name}, {kind}}}")
            offset = f"offset:{offset} "
            self.space()
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise IcuTooDeep(f"ICU messages nested over {MAX_NESTING} levels deep")
        branches = []
        while self.text[self.at:self.at + 1] != "}":
            selector = self.word()
            if not selector:
                raise IcuSyntaxError(f"{{{name}, {kind}}} has a branch without a selector"
                                     if self.at < len(self.text) else "a { is not closed")
            self.space()
            self.expect("{", f"selector {selector} of {{{name}, {kind}}} without its {{message}}")
            self.add("syntax", self.text[start:self.at])
            index = len(self.branches)
            self.branches.append((self.at, self.at))
            inner = self.message(nested=True, plural=plural or kind != "select")
            self.branches[index] = (self.branches[index][0], self.at)
            start = self.at
            self.at += 1
            self.space()
            branches.append(f"{selector} {{{inner or '…'}}}")
        if not branches:
            raise IcuSyntaxError(f"{{{name}, {kind}}} has no selectors")
        self.depth -= 1
        self.at += 1
        self.add("syntax", self.text[start:self.at])
        return f"{{{name}, {kind}, {offset}{' '.join(branches)}}}"

    def skip_style(self) -> None:
        """Past the ``}`` that closes a simple argument (its style may hold braces: ``{d, date, ::{x}}``)."""
        depth = 0
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if char == "{":
                depth += 1
            elif char == "}":
                if depth == 0:
                    return
                depth -= 1
        raise IcuSyntaxError("a { is not closed")
