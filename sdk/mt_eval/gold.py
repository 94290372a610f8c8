"""What a method may see of a corpus entry: everything but the gold.

A method is handed each entry's ``id``, ``source`` and its other fields, never the answers it is scored
against. ``reference`` and ``references`` are always gold, and so are the reference's aliases (``target``,
``translation``, ``ref``, ``tgt``, ``target_text``); a corpus marks more (a post-edit, a
second reference under another name, …) by listing them in ``dataset.gold_fields``. Every host — the
harness in-process and over the bridge, the Node host — hands entries to a method through `method_view`
(its Node twin is ``bridge/node/lib/gold.js``; ``bridge/vectors/gold-fields.json`` keeps them equal).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The reference under the names a corpus may give it (`mt_eval.corpus.model.REFERENCE_ALIASES`) is gold too: beside
# a "reference" the alias is not renamed, and would otherwise reach the method as an extra field.
GOLD_FIELDS: frozenset[str] = frozenset({"reference", "references", "target", "translation", "ref", "tgt",
                                         "target_text"})


def corpus_gold_fields(dataset: Mapping[str, Any]) -> frozenset[str]:
    """The gold fields of a corpus: the defaults plus what its ``dataset.gold_fields`` lists.

    Raises ValueError when ``gold_fields`` is not a list of field names (a corpus that cannot say
    what is gold must not be run: its answers could reach the method)."""
    declared = dataset.get("gold_fields")
    if declared is None:
        return GOLD_FIELDS
    if not isinstance(declared, list) or not all(isinstance(name, str) and name for name in declared):
        raise ValueError('dataset.gold_fields must be a list of entry field names, e.g. ["post_edit"]')
    if {"id", "source"} & set(declared):
        raise ValueError('dataset.gold_fields cannot name "id" or "source": the method needs them')
    return GOLD_FIELDS | frozenset(declared)


def method_view(entries: Iterable[Mapping[str, Any]], gold: Iterable[str] = GOLD_FIELDS) -> list[dict[str, Any]]:
    """Copies of ``entries`` without their gold fields: what a method is handed."""
    hidden = gold if isinstance(gold, frozenset) else frozenset(gold)
    return [dict(entry) if hidden.isdisjoint(entry)  # (the usual entry, copied the fast way)
            else {key: value for key, value in entry.items() if key not in hidden} for entry in entries]
