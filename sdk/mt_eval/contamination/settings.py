"""The contamination check's thresholds and limits, with their defaults and what each means.

Every number the check decides by is here, recorded in each report and run card, and settable from the
command line (``mt-eval contamination --help`` lists the flags).
"""

from __future__ import annotations

import math
from typing import Annotated

import msgspec

GiB = 1 << 30
MiB = 1 << 20


class CheckSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """Thresholds of the contamination check. Lengths are in normalised words."""

    ngram: Annotated[int, msgspec.Meta(ge=2, le=16)] = 5
    """Words per indexed n-gram. A hit needs at least one shared run this long (shorter entries: the whole
    entry); near-duplicate coverage counts only shared runs at least this long."""
    min_words: Annotated[int, msgspec.Meta(ge=1)] = 3
    """Entries (per side) with fewer words are not checked: too short to tell from a common phrase."""
    standalone_below: Annotated[int, msgspec.Meta(ge=1)] = 8
    """An entry with fewer words counts only as an exact match that stands alone: set off on both sides by
    punctuation, a tab, a line end or the edge of a string, cell or entry."""
    near_duplicate: Annotated[float, msgspec.Meta(gt=0, le=1)] = 0.8
    """Coverage (share of an entry's words inside shared runs of ``ngram`` or more words, found together
    in one place) from which an entry of ``standalone_below`` or more words is a near-duplicate."""
    long_ngram: Annotated[int, msgspec.Meta(ge=2)] = 12
    """A shared run of this many words is a hit however long the entry is."""
    common_ngram: Annotated[int, msgspec.Meta(ge=1)] = 1000
    """An n-gram shared by more corpus texts than this is too common to look up (it still counts toward
    coverage once a rarer n-gram has found the entry); texts made only of such n-grams are listed."""
    plant: Annotated[int, msgspec.Meta(ge=0)] = 20
    """Corpus entries planted in the control copy (0: no control, so the verdict is at best unverified)."""
    seed: int = 12345
    """Seed of the planted control's sample, perturbations and places."""
    recall_floor: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.9
    """Planted-control recall below which a check without hits is "unverified", not "clean"."""
    max_file_bytes: Annotated[int, msgspec.Meta(ge=1)] = GiB
    """Files (and archive members, decompressed) larger than this are listed and not read."""
    max_archive_bytes: Annotated[int, msgspec.Meta(ge=1)] = 4 * GiB
    """Decompressed bytes read from one archive before it is listed as not fully read (archive bombs)."""
    max_code_bytes: Annotated[int, msgspec.Meta(ge=1)] = 8 * MiB
    """Python and JavaScript files larger than this are read as plain text instead of parsed."""
    max_archive_depth: Annotated[int, msgspec.Meta(ge=0)] = 3
    """Archives inside archives are opened this many levels deep."""

    def __post_init__(self) -> None:
        if self.standalone_below < self.min_words:
            raise ValueError(f"standalone_below ({self.standalone_below}) must be at least min_words "
                             f"({self.min_words})")
        if self.long_ngram < self.ngram:  # (a shared run shorter than ngram is never found: the rule would be moot)
            raise ValueError(f"long_ngram ({self.long_ngram}) must be at least ngram ({self.ngram})")

    def required_cover(self, words: int) -> int:
        """The fewest words of an entry of ``words`` words that shared n-grams must cover for any kind of hit:
        all of them for an exact match, ``near_duplicate × words`` for a near-duplicate (entries of
        ``standalone_below`` words or more), ``long_ngram`` for a long shared run."""
        needs = [words]
        if words >= self.standalone_below:
            needs.append(math.ceil(round(self.near_duplicate * words, 6)))
        if words >= self.long_ngram:
            needs.append(self.long_ngram)
        return min(needs)
