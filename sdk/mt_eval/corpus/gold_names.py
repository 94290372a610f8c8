"""Fields a corpus's ``dataset.gold_fields`` misses: a field named a slip away from a declared gold field
(``post-edit`` beside ``"gold_fields": ["post_edit"]``) would be handed to the method, the gold with it; a declared
gold field that no entry has may mean the gold is under another name. `mt_eval.corpus.doubts` makes them doubts."""

from __future__ import annotations

from typing import NamedTuple

from mt_eval.corpus.model import Corpus
from mt_eval.corpus.names import misspelling_of


class GoldNameDoubt(NamedTuple):
    message: str
    hint: str
    refuse: bool


def gold_name_doubts(corpus: Corpus) -> list[GoldNameDoubt]:
    """A refusing doubt for the fields a slip away from a declared gold field, and a warning for declared gold fields
    no entry has (nothing for a corpus that declares none)."""
    declared = corpus.dataset.get("gold_fields")
    if not isinstance(declared, list) or not declared:
        return []
    gold = {name for name in declared if isinstance(name, str) and name}
    slips = [(name, meant) for name in sorted(corpus.field_names) if name not in gold
             and misspelling_of(name) is None and (meant := misspelling_of(name, gold)) is not None]
    doubts = []
    if slips:
        listed = " and ".join(f'"{name}" (first at {corpus.field_place(name)})' for name, _ in slips)
        wanted = " and ".join(f'"{name}"' for name in dict.fromkeys(meant for _, meant in slips))
        one = len(slips) == 1
        it = "it" if one else "them"
        doubts.append(GoldNameDoubt(
            f"field{'' if one else 's'} {listed} {'is not a name' if one else 'are not names'} dataset.gold_fields "
            f"gives the gold, so the method would be handed {it}, gold and all",
            f"did you mean {wanted}? rename {it}, or list {it} in dataset.gold_fields", True))
    named = {meant for _, meant in slips}
    absent = list(dict.fromkeys(name for name in declared if isinstance(name, str) and name
                                and name not in corpus.field_names and name not in named))
    if absent:
        one = len(absent) == 1
        doubts.append(GoldNameDoubt(
            f"dataset.gold_fields names {' and '.join(f'{chr(34)}{name}{chr(34)}' for name in absent)}, which no "
            "entry has: gold under another name would be handed to the method",
            f"name the gold field{'' if one else 's'} in the entries as dataset.gold_fields does, or drop "
            f"{'it' if one else 'them'} from dataset.gold_fields", False))
    return doubts
