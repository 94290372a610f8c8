"""The corpora cut into parts of consecutive entries, each indexed on its own, and documents checked
against every part with their hits merged.

Corpora of up to `PART_ENTRIES` entries in all (nearly every corpus) are one part, indexed once and kept:
the check then works exactly as with a single index. Larger ones are cut into parts of about equal size;
each part is indexed in turn during one pass over the entries, the documents are checked against it, and
it is dropped before the next is built, so the memory the check needs follows the part size, not the
corpus (the documents — the bundle's files — are read once per part). The last part built is kept for the
planted control. All parts share one `Lexicon`, so the same text has the same key in every part, and
the merged hits come in the order a single index would give them: by document, place and unit, then
entry.

Where parts differ from one index over everything: an n-gram is too common to look up
(`CheckSettings.common_ngram`) by its count within its part, and ``texts_uncheckable`` adds up the
parts' counts (a text repeated in two parts is counted in each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

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
    complete: bool = field(default=False, repr=False)


class CorpusParts:
    """The corpora to check against, indexed a part at a time (`indexes`)."""

    def __init__(self, corpora: Sequence[CorpusTexts], settings: CheckSettings) -> None:
        self.corpora = list(corpora)
        self.settings = settings
        self.entries = sum(len(corpus.entries) for corpus in self.corpora)
        count = max(1, -(-self.entries // PART_ENTRIES))
        self.sizes = [self.entries * (k + 1) // count - self.entries * k // count for k in range(count)]
        self.lexicon = Lexicon()
        self.last: CorpusIndex | None = None
        self.totals = Totals(texts=[0] * len(self.corpora))

    def __len__(self) -> int:
        return len(self.sizes)

    def indexes(self, progress: Progress | None = None) -> Iterator[CorpusIndex]:
        """Each part's index in turn, built from one pass over the entries; drop each before asking for the
        next. A single part is built once and given again on later passes."""
        if len(self.sizes) == 1 and self.last is not None:
            yield self.last
            return
        say = progress or (lambda _message: None)
        stream = EntryStream(self.corpora)
        totals = Totals(texts=[0] * len(self.corpora))
        first = 0
        for number, size in enumerate(self.sizes):
            if len(self.sizes) > 1:
                say(f"indexing part {number + 1} of {len(self.sizes)}: entries {first + 1:,} to "
                    f"{first + size:,} of {self.entries:,}")
            self.last = None  # the previous part goes before the next is built
            last = number == len(self.sizes) - 1
            index = CorpusIndex(PartTexts(self.corpora, stream.take(None if last else size)), self.settings,
                                self.lexicon)
            totals.texts = [a + b for a, b in zip(totals.texts, index.part.texts_per_corpus().tolist(), strict=True)]
            totals.too_short += index.too_short
            totals.uncheckable += index.uncheckable
            totals.units += index.units
            if len(self.sizes) == 1:
                files = len(self.corpora)
                say(f"indexing {index.texts:,} texts of {files} corpus file{'s' if files > 1 else ''}")
            self.last, first = index, first + size
            del index
            yield self.last
        totals.complete = True
        self.totals = totals

    def control_index(self) -> CorpusIndex:
        """The index the planted control uses: the last part (built by a pass of `indexes`)."""
        if self.last is None:
            for _index in self.indexes():
                pass
        assert self.last is not None
        return self.last


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
        part += 1
    found.sort(key=lambda keyed: keyed[0])
    return [hit for _key, hit in found]
