"""Normalising text into words, the same way for corpus entries and for everything found in a bundle.

Text is stripped of invisible characters (a soft hyphen or zero-width space inside a word), NFKC-normalised
(full-width letters, ligatures and other compatibility forms become their plain forms), case-folded and stripped
of combining accents; punctuation, symbols, underscores and whitespace
separate words. Han, kana, Thai, Lao, Myanmar and Khmer characters are a word each, since those scripts
do not separate words with spaces.

`tokenize_pieces` also records, for each word, the line it came from and whether a *break* precedes it:
punctuation, a tab, a line end, or the boundary between two pieces (two string literals, two cells, two
entries). Breaks let a short corpus entry count only when it stands alone
(`CheckSettings.standalone_below`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

PUNCT = "\ue000"  # the code of punctuation, symbols, underscores and tabs (each character a mark of its own)
PIECE = "\ue001"  # the boundary between two pieces
NEWLINE = "\n"

UNKNOWN = -1  # a word the corpus never uses
# vocabulary codes of the marks; words have codes >= 0
MARK_CODES = {PUNCT: -2, PIECE: -3, NEWLINE: -4}

_SCRIPT_CHARS = ("\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf"
                 "\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f")
_ACCENTS = re.compile("[\u0300-\u036f]+")
# characters that are not shown (Unicode's default-ignorable code points: the soft hyphen, zero-width spaces and
# joiners, direction marks, variation selectors, tags): removed, so one inside a word does not cut it in two
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                        "\U000e0000-\U000e0fff]+")
# a word, a character of a script without spaces, or a mark: one punctuation or symbol character, a line
# end, a tab, an underscore (a piece boundary is a symbol too)
_ITEMS = re.compile(f"[{_SCRIPT_CHARS}]|[^\\W_{_SCRIPT_CHARS}]+|[^\\w\\s]|[\n\t_]")
_SPACED_SCRIPT = re.compile(f"([{_SCRIPT_CHARS}]) (?=[{_SCRIPT_CHARS}])")


def normalize(text: str) -> str:
    """NFKC, case-folded, without invisible characters or combining accents."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text)).casefold()
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", text)))


def is_word(item: str) -> bool:
    return item[0].isalnum()


class Vocabulary(dict[str, int]):
    """Word → id (0, 1, …), and mark → its code (`MARK_CODES`). Looking up anything else gives `UNKNOWN`
    for a word and the `PUNCT` code for a punctuation or symbol character."""

    def __init__(self) -> None:
        super().__init__(MARK_CODES)
        self.words = 0

    def add(self, word: str) -> None:
        if word not in self and is_word(word):
            self[word] = self.words
            self.words += 1

    def __missing__(self, item: str) -> int:
        if is_word(item):
            return UNKNOWN
        self[item] = MARK_CODES[PUNCT]  # few: remembered
        return MARK_CODES[PUNCT]


def items(text: str) -> list[str]:
    """The normalised words of ``text`` and the marks between them."""
    return _ITEMS.findall(normalize(text))


def joined_items(texts: Iterable[str]) -> list[str]:
    """`items` of ``texts`` with a `PIECE` mark between each two."""
    return _ITEMS.findall(PIECE.join(map(normalize, texts)))


def words(text: str) -> list[str]:
    """The normalised words of ``text``."""
    return [item for item in items(text) if is_word(item)]


@dataclass
class TokenStream:
    """The words of a run of pieces, and where each came from.

    ``items`` are the words and marks in order; ``at[i]`` is the index in ``items`` of word ``i``.
    ``ids`` are vocabulary ids (`UNKNOWN` for a word the corpus never uses), ``lines`` the line (or other
    locator) of each word, ``breaks[i]`` whether a break precedes word ``i``, and ``end_break`` whether one
    follows the last word.
    """

    items: list[str]
    at: np.ndarray
    ids: np.ndarray
    lines: np.ndarray
    breaks: np.ndarray
    end_break: bool = True

    def __len__(self) -> int:
        return len(self.ids)

    def break_after(self, position: int) -> bool:
        """Whether a break follows the word at ``position``."""
        following = position + 1
        return self.end_break if following >= len(self.ids) else bool(self.breaks[following])

    def text(self, start: int, stop: int) -> str:
        """The normalised words ``start``..``stop`` (exclusive), separated by spaces (but not between two
        characters of a script written without spaces)."""
        return _SPACED_SCRIPT.sub(r"\1", " ".join(self.items[i] for i in self.at[start:stop].tolist()))

    def tail(self, count: int) -> TokenStream:
        """The last ``count`` words (to carry over into the next chunk of a long document)."""
        if count <= 0 or len(self) == 0:
            return empty_stream()
        start = max(0, len(self) - count)
        first_item = int(self.at[start])
        return TokenStream(items=self.items[first_item:], at=self.at[start:] - first_item, ids=self.ids[start:],
                           lines=self.lines[start:], breaks=self.breaks[start:], end_break=self.end_break)

    def then(self, following: TokenStream) -> TokenStream:
        """This stream followed by ``following`` (no break added between them)."""
        if len(self) == 0:
            return following
        return TokenStream(items=self.items + following.items,
                           at=np.concatenate((self.at, following.at + len(self.items))),
                           ids=np.concatenate((self.ids, following.ids)),
                           lines=np.concatenate((self.lines, following.lines)),
                           breaks=np.concatenate((self.breaks, following.breaks)), end_break=following.end_break)


def tokenize_pieces(pieces: Sequence[tuple[int, str]], lookup: Vocabulary) -> TokenStream:
    """The words of ``pieces`` (each ``(line, text)``; a piece may span lines), looked up in ``lookup``.
    A piece's edges are breaks."""
    if not pieces:
        return empty_stream()
    found = joined_items(text for _line, text in pieces)
    if not found:
        return empty_stream()
    codes = np.fromiter(map(lookup.__getitem__, found), dtype=np.int32, count=len(found))
    is_word = codes >= UNKNOWN
    is_piece = codes == MARK_CODES[PIECE]
    # the line of every item: its piece's first line plus the line ends before it inside the piece
    piece_index = np.cumsum(is_piece)
    first_lines = np.fromiter((line for line, _text in pieces), dtype=np.int64, count=len(pieces))
    newlines = np.cumsum(codes == MARK_CODES[NEWLINE])
    newlines_before_piece = np.concatenate(([0], newlines[is_piece]))
    lines = first_lines[piece_index] + newlines - newlines_before_piece[piece_index]
    previous_is_mark = np.concatenate(([True], ~is_word[:-1]))
    at = np.flatnonzero(is_word)
    return TokenStream(items=found, at=at, ids=codes[at], lines=lines[at], breaks=previous_is_mark[at])


def empty_stream() -> TokenStream:
    return TokenStream(items=[], at=np.zeros(0, np.int64), ids=np.zeros(0, np.int32),
                       lines=np.zeros(0, np.int64), breaks=np.zeros(0, bool))
