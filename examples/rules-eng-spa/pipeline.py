"""A small rule-based English→Spanish translator: lexicon lookup, noun groups reordered, agreement.

1. Words are looked up in the bundled CC0 lexicon (lexicon.tsv), the longest phrase first; an English
   plural the lexicon does not list is found through its singular (cats → cat, cities → city).
2. Noun groups — a determiner, adjectives (each maybe after adverbs) and a noun — are reordered the
   Spanish way (determiner, noun, adjectives) and agree with the noun in gender and number:
   "a new school" → "una escuela nueva", "these red cars" → "estos coches rojos".
3. Adjectives after a copula agree with the subject: "The door is big and red." → "La puerta es grande y
   roja."; "de el" and "a el" contract to "del" and "al".
4. Unknown words, punctuation, spacing and newlines are kept; a capital first letter stays capital.

translate.js beside this file behaves identically (the tests run both through the same corpus). Only the
standard library is used. Each result's metadata counts the words the lexicon did not know.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")  # letters and digits, with inner apostrophes
JOINED = re.compile(r"[ \t\u00a0]+")  # a gap that words of one phrase or noun group may span
SENTENCE_END = re.compile(r"[.!?\n]")
CONTRACTION = re.compile(r"(?<![^\W_])([Dd]e|[Aa]) el(?![^\W_])")


@dataclass(frozen=True)
class Entry:
    target: str
    tag: str

    @property
    def kind(self) -> str:
        return self.tag.split(".")[0]


def parse_lexicon(text: str, label: str = "lexicon.tsv") -> dict[str, Entry]:
    """``english<TAB>spanish<TAB>tag`` lines → {lowercased English words joined by one space: Entry}."""
    lexicon: dict[str, Entry] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        key = " ".join(WORD.findall(fields[0].lower()))
        if len(fields) != 3 or not key or not fields[1].strip() or not fields[2].strip():
            raise ValueError(f'{label}:{number}: expected "english<TAB>spanish<TAB>tag", got {line!r}')
        lexicon[key] = Entry(fields[1].strip(), fields[2].strip())
    return lexicon


def plural(word: str) -> str:
    """The Spanish plural of a noun or adjective: casa → casas, ciudad → ciudades, feliz → felices."""
    if word.endswith("ión"):
        return word[:-3] + "iones"
    if word.endswith("z"):
        return word[:-1] + "ces"
    return word + ("s" if word[-1:] in "aeiouáéó" else "es")


def inflect(adjective: str, gender: str, number: str) -> str:
    """An adjective agreeing in gender and number: nuevo → nueva, nuevas; grande → grandes."""
    if gender == "f":
        if adjective.endswith("o"):
            adjective = adjective[:-1] + "a"
        elif adjective.endswith("or"):
            adjective += "a"
    return plural(adjective) if number == "pl" else adjective


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def contract(match: re.Match[str]) -> str:
    """"de el" → "del", "A el" → "Al"."""
    first = match.group(1)[0]
    return first + ("el" if first in "Dd" else "l")


@dataclass
class Unit:
    """One lexicon match (or unknown word) over source words ``first``..``last``."""

    first: int
    last: int
    entry: Entry | None
    is_plural: bool = False

    @property
    def kind(self) -> str:
        return self.entry.kind if self.entry is not None else "unknown"


class RulesTranslator:
    def __init__(self, lexicon: dict[str, Entry]) -> None:
        self.lexicon = lexicon
        self.longest = max((len(key.split(" ")) for key in lexicon), default=1)

    def translate(self, text: str) -> tuple[str, int]:
        """The translation of ``text`` and how many of its words the lexicon did not know."""
        spans = [(m.start(), m.end()) for m in WORD.finditer(text)]
        units = self.units(text, spans)

        def gap(before: int) -> str:  # the text between unit ``before - 1`` and unit ``before``
            end = spans[units[before - 1].last][1] if before > 0 else 0
            return text[end:spans[units[before].first][0]] if before < len(units) else text[end:]

        out: list[str] = []
        subject: tuple[str, str] | None = None
        predicate = False
        index = 0
        while index < len(units):
            out.append(gap(index))
            starts = index == 0 or SENTENCE_END.search(gap(index)) is not None
            if starts:
                subject, predicate = None, False
            end = self.noun_group(units, index, gap)
            if end is not None:
                words, subject = self.render_group(text, spans, units[index:end])
                out.append(words[0])
                for offset, word in enumerate(words[1:], start=1):
                    out.append(gap(index + offset) + word)
                predicate = False
                index = end
                continue
            unit = units[index]
            entry = unit.entry
            source = text[spans[unit.first][0]:spans[unit.last][1]]
            if entry is None:
                out.append(source)
                predicate = False
            else:
                word = self.render(unit, subject if predicate else None)
                capital = source[:1] != source[:1].lower() and (starts or source != "I")  # "I" is always capital
                out.append(capitalized(word) if capital else word)
                if unit.kind == "pron":
                    _, gender, number = entry.tag.split(".")
                    subject = (gender, number)
                predicate = unit.kind in ("cop", "adv", "conj", "adj") and (predicate or unit.kind == "cop")
            index += 1
        out.append(gap(len(units)))
        unknown = sum(u.last - u.first + 1 for u in units if u.entry is None)
        return CONTRACTION.sub(contract, "".join(out)), unknown

    def units(self, text: str, spans: list[tuple[int, int]]) -> list[Unit]:
        found: list[Unit] = []
        index = 0
        while index < len(spans):
            unit = self.match(text, spans, index)
            found.append(unit)
            index = unit.last + 1
        return found

    def match(self, text: str, spans: list[tuple[int, int]], index: int) -> Unit:
        for size in range(min(self.longest, len(spans) - index), 0, -1):
            chosen = spans[index:index + size]
            if any(not JOINED.fullmatch(text[a[1]:b[0]]) for a, b in pairwise(chosen)):
                continue
            key = " ".join(text[start:end].lower() for start, end in chosen)
            if key in self.lexicon:
                entry = self.lexicon[key]
                return Unit(index, index + size - 1, entry, entry.tag.endswith(".pl"))
        word = text[spans[index][0]:spans[index][1]].lower()
        for suffix, replacement in (("ies", "y"), ("es", ""), ("s", "")):
            if len(word) > 3 and word.endswith(suffix):
                entry = self.lexicon.get(word[:-len(suffix)] + replacement)
                if entry is not None and entry.kind == "n" and not entry.tag.endswith(".pl"):
                    return Unit(index, index, entry, True)
        return Unit(index, index, None)

    @staticmethod
    def noun_group(units: list[Unit], start: int, gap: Any) -> int | None:
        """The end (exclusive) of the noun group starting at unit ``start``, or None."""
        def joined(at: int) -> bool:
            return at < len(units) and (at == start or JOINED.fullmatch(gap(at)) is not None)

        at = start
        if joined(at) and units[at].kind == "det":
            at += 1
        while True:
            probe = at
            while joined(probe) and units[probe].kind == "adv":
                probe += 1
            if joined(probe) and units[probe].kind == "adj":
                at = probe + 1
                continue
            break
        return at + 1 if joined(at) and units[at].kind == "n" else None

    def render_group(self, text: str, spans: list[tuple[int, int]], group: list[Unit]
                     ) -> tuple[list[str], tuple[str, str]]:
        """Spanish word order (determiner, noun, adverbs and adjectives) with agreement, and the features."""
        noun = group[-1]
        assert noun.entry is not None
        gender = noun.entry.tag.split(".")[1]
        determiner = group[0] if group[0].kind == "det" else None
        plural_group = noun.is_plural or (determiner is not None and determiner.entry is not None
                                          and determiner.entry.tag == "det.pl")
        features = (gender, "pl" if plural_group else "sg")
        modifiers = group[1 if determiner else 0:-1]
        ordered = ([determiner] if determiner else []) + [noun] + modifiers
        words = [self.render(unit, features) for unit in ordered]
        first = text[spans[group[0].first][0]:spans[group[0].last][1]]
        if first[:1] != first[:1].lower():
            words[0] = capitalized(words[0])
        return words, features

    @staticmethod
    def render(unit: Unit, features: tuple[str, str] | None) -> str:
        entry = unit.entry
        assert entry is not None
        gender, number = features or ("m", "sg")
        if unit.kind == "det":
            forms = entry.target.split("|")
            return forms[(2 if number == "pl" else 0) + (1 if gender == "f" else 0)]
        if unit.kind == "adj":
            return inflect(entry.target, gender, number)
        if unit.kind == "n" and not entry.tag.endswith(".pl") and (unit.is_plural or number == "pl"):
            return plural(entry.target)
        return entry.target


def abstention(source: str, config: Any) -> str | None:
    """Why the method declines an entry: a pair other than English→Spanish (a config without languages means
    eng>spa), or a source without a word."""
    pair = f"{_setting(config, 'source_lang') or 'eng'}>{_setting(config, 'target_lang') or 'spa'}"
    if pair != "eng>spa":
        return f"unsupported pair {pair}: this method translates eng>spa only"
    if WORD.search(source) is None:
        return "the source has no word to translate (it is empty, or only symbols and control characters)"
    return None


def _setting(config: Any, name: str) -> Any:
    return config.get(name) if isinstance(config, dict) else getattr(config, name, None)


class RulesMethod:
    """The method: the lexicon is read once; entries are translated one by one."""

    def __init__(self, directory: str | Path) -> None:
        path = Path(directory) / "lexicon.tsv"
        self.translator = RulesTranslator(parse_lexicon(path.read_text(encoding="utf-8"), path.name))

    async def translate(self, entries: list[dict[str, Any]], config: Any) -> list[dict[str, Any]]:
        results = []
        for entry in entries:
            started = time.perf_counter()
            reason = abstention(entry["source"], config)
            if reason is not None:
                results.append({"id": entry["id"], "abstained": True, "abstain_reason": reason,
                                "latency_s": time.perf_counter() - started})
                continue
            predicted, unknown = self.translator.translate(entry["source"])
            results.append({"id": entry["id"], "predicted": predicted, "latency_s": time.perf_counter() - started,
                            "metadata": {"unknown_words": unknown}})
        return results
