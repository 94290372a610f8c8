"""The corpora cut into parts of consecutive entries, each indexed on its own, and documents checked
against every part with their hits merged.

Corpora of up to `PART_ENTRIES` entries in all (nearly every corpus) are one part, indexed once and kept:
the check then works exactly as with a single index. Larger ones are cut into parts of about equal size;
each part is indexed in turn during one pass over the entries, the documents are checked against it, and
it is dropped before the next is built, so the memory the check needs follows the part size, not the
corpus (the documents — the bundle's files — are read once per part). The last part built is kept for
the planted control (`CorpusParts.control_index`). All parts share one `Lexicon`, so the same text has
the same key in every part, and the merged hits come in the order a single index would give them: by
document, place and unit, then entry.

Where parts differ from one index over everything: an n-gram is too common to look up
(`CheckSettings.common_ngram`) by its count within its part; ``texts_uncheckable`` adds up the parts'
counts (a text repeated in two parts is counted in each); and a document of more than a mebibyte is read
in chunks that carry over as many words as the part's longest text needs (`matching.Matcher`), so a
partial match across a chunk's edge may be aligned within a narrower window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from mt_eval.contamination.corpora import CorpusTexts, EntryStream, PartTexts
from mt_eval.contamination.index import CorpusIndex, Lexicon
from mt_eval.contamination.matching import Document, Matcher
from mt_eval.contamination.report import Hit
from mt_eval.contamination.settings import CheckSettings

PART_ENTRIES = 100_000

Progress = Callable[[str], None]


@dataclass
class Totals:
    """What the parts' indexes add up to, for the report."""

    texts: list[int]  # per corpus
    too_short: int = 0
    uncheckable: int = 0
    units: int = 0


class CorpusParts:
    """The corpora to check against, indexed a part at a time (`indexes`)."""

    def __init__(self, corpora: Sequence[CorpusTexts], settings: CheckSettings) -> None:
        self.corpora = list(corpora)
        self.settings = settings
        self.entries = sum(len(corpus.entries) for corpus in self.corpora)
        count = max(1, -(-self.entries // PART_ENTRIES))
        self.sizes = [self.entries * (k + 1) // count - self.entries * k // count for k in range(count)]
        self.lexicon = Lexicon()
        self.totals = Totals(texts=[0] * len(self.corpora))
        self.plantable: list[int] = []  # per part, after a pass: how many texts the control could plant
        self._kept: tuple[int, CorpusIndex] | None = None  # the part built last

    def __len__(self) -> int:
        return len(self.sizes)

    def indexes(self, progress: Progress | None = None) -> Iterator[CorpusIndex]:
        """Each part's index in turn, built from one pass over the entries; drop each before asking for the
        next. A single part is built once and given again on later passes."""
        if len(self.sizes) == 1 and self._kept is not None:
            yield self._kept[1]
            return
        say = progress or (lambda _message: None)
        stream = EntryStream(self.corpora)
        totals, plantable = Totals(texts=[0] * len(self.corpora)), []
        for number in range(len(self.sizes)):
            if len(self.sizes) > 1:
                first = sum(self.sizes[:number])
                say(f"indexing part {number + 1} of {len(self.sizes)}: entries {first + 1:,} to "
                    f"{first + self.sizes[number]:,} of {self.entries:,}")
            index = self._build(number, stream)
            totals.texts = [a + b for a, b in zip(totals.texts, index.part.texts_per_corpus().tolist(), strict=True)]
            totals.too_short += index.too_short
            totals.uncheckable += index.uncheckable
            totals.units += index.units
            plantable.append(len(index.owner_texts))
            if len(self.sizes) == 1:
                files = len(self.corpora)
                say(f"indexing {index.texts:,} texts of {files} corpus file{'s' if files > 1 else ''}")
            del index
            yield self._kept[1]  # type: ignore[index]
        self.totals, self.plantable = totals, plantable

    def control_index(self) -> CorpusIndex:
        """The index the planted control uses: the last part, still in memory after a pass — unless it has
        fewer texts to plant than another part (a corpus ending in short entries, say): then the part with
        the most, built again."""
        if not self.plantable:
            for _index in self.indexes():
                pass
        wanted = min(self.settings.plant, max(self.plantable))
        number = len(self.sizes) - 1
        if self.plantable[number] < wanted:
            number = self.plantable.index(max(self.plantable))
        if self._kept is None or self._kept[0] != number:
            stream = EntryStream(self.corpora)
            stream.skip(sum(self.sizes[:number]))
            self._build(number, stream)
        assert self._kept is not None
        return self._kept[1]

    def _build(self, number: int, stream: EntryStream) -> CorpusIndex:
        """Index part ``number`` from the next entries of ``stream`` (the last part: all that are left)."""
        self._kept = None  # the part built before goes first
        last = number == len(self.sizes) - 1
        index = CorpusIndex(PartTexts(self.corpora, stream.take(None if last else self.sizes[number])),
                            self.settings, self.lexicon)
        self._kept = (number, index)
        return index


def scan_parts(indexes: Iterable[CorpusIndex], documents: Callable[[], Iterable[Document]]) -> list[Hit]:
    """The hits of ``documents()`` (asked for again for each part) against every index, merged in the order
    one index over all the parts would give."""
    found: list[tuple[tuple[int, int, int, int, int], Hit]] = []
    part = 0
    for index in indexes:  # not enumerate(): its reused result tuple would keep the previous part alive
        matcher = Matcher(index)
        for number, document in enumerate(documents()):
            found.extend(((number, start, key, part, order), hit)
                         for order, (start, key, hit) in enumerate(matcher.located(document)))
        del index, matcher
        part += 1  # noqa: SIM113 (see above)
    found.sort(key=lambda keyed: keyed[0])
    return [hit for _key, hit in found]
