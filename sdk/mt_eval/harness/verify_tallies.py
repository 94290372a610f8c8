"""Step 4 of re-verifying a run card (`mt_eval.harness.verify`): its own tallies add up.

One result per id; ``errors``, the ``usage`` totals and the count of cached results, ``corpus.entries`` (for a
selection, ``selection.entries_selected``), ``metrics.segments``, ``status`` and ``failures`` are what the results
say; and every result is one a run accepts (`mt_eval.records.result_problem`). A card that references its log is
read with it: one pass over the results, a block at a time.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import attrgetter, is_not
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mt_eval.harness.runcard import CardResult, RunCard
    from mt_eval.harness.verification import Verification


def check_tallies(result: Verification, card: RunCard) -> None:
    from mt_eval.harness.card_results import in_blocks
    from mt_eval.records import result_problem

    repeated: list[str] = []
    ids: list[Any] = []
    failing: list[CardResult] = []
    errors = prompt = completion = 0
    total: int | None = None  # (None while no result reports it, as a run totals them: `mt_eval.results.totals`)
    cached: int | None = None
    unusable: list[tuple[int, str]] = []  # (index, why) of results no run accepts
    for results in in_blocks(card.results):  # (one pass over a log); each tally a loop in C (`map`)
        ids += map(attrgetter("id"), results)
        said = list(map(attrgetter("error"), results))
        if said.count(None) < len(results):
            failing += compress(results, map(is_not, said, repeat(None)))
        errors += len(results) - said.count(None)
        usages = list(map(attrgetter("usage"), results))
        prompt += sum(map(attrgetter("prompt_tokens"), usages))
        completion += sum(map(attrgetter("completion_tokens"), usages))
        reported = list(map(attrgetter("total_tokens"), usages))
        if reported.count(None) < len(reported):
            total = (total or 0) + sum(filter(None, reported))
        marks = list(map(attrgetter("cached"), results))
        if marks.count(None) < len(marks):
            cached = (cached or 0) + marks.count(True)
        unusable += [(len(ids) - len(results) + i, why) for i, why in enumerate(map(result_problem, results)) if why]
    keys: list[str] = ids if set(map(type, ids)) <= {str} else _keys(ids)  # 7 and "7" are one id
    result.keys = keys
    if len(set(keys)) != len(keys):
        from collections import Counter

        repeated = sorted(i for i, n in Counter(keys).items() if n > 1)
    if repeated:
        result.problem("$.results", f"{len(repeated)} ids have more than one result (e.g. {repeated[0]!r})",
                       code="duplicate")
    for index, why in unusable[:5]:  # (a run turns such a result into a failed entry; the first few are named)
        more = f" ({len(unusable)} results are not)" if len(unusable) > 5 and index == unusable[0][0] else ""
        result.problem(f"$.results[{index}]", f"not a result a run accepts: {why}{more}", "use the card the run wrote",
                       code="result")
    expected: dict[str, tuple[object, object]] = {
        "$.errors": (card.errors, errors),
        "$.usage.prompt_tokens": (card.usage.prompt_tokens, prompt),
        "$.usage.completion_tokens": (card.usage.completion_tokens, completion),
        "$.usage.total_tokens": (card.usage.total_tokens, total),
        "$.cached": (card.cached, cached),
    }
    where, ran = "$.corpus.entries", card.corpus.entries
    if card.selection is not None:  # a selection ran part of the corpus
        where, ran = "$.selection.entries_selected", card.selection.entries_selected
        expected["$.selection.entries_in_corpus"] = (card.selection.entries_in_corpus, card.corpus.entries)
    # A run writes a result for every entry it ran, failed ones too (an interrupted run writes no card): a
    # partial or failed card with fewer had results taken out.
    expected[where] = (ran, len(card.results))
    if card.metrics is not None:
        controls = set() if card.families is None else {c.id for c in card.families.canaries} | {
            n.id for n in card.families.negatives}
        expected["$.metrics.segments"] = (card.metrics.segments, len(keys) - sum(map(controls.__contains__, keys)))
    expected.update(_outcome(card, keys, failing))
    wrong = [(where, stated, actual) for where, (stated, actual) in expected.items() if stated != actual]
    for where, stated, actual in wrong:
        result.problem(where, f"the card says {'null' if stated is None else stated}, its results say "
                              f"{'null' if actual is None else actual}")
    result.check("tallies", not wrong and not repeated and not unusable,
                 f"{len(card.results)} results, {card.errors} errors" if not wrong and not unusable else
                 ", ".join([where.removeprefix("$.") for where, _, _ in wrong] + ["results"] * bool(unusable))
                 + " disagree with the results")


def _outcome(card: RunCard, keys: list[str], failing: list[CardResult]) -> dict[str, tuple[object, object]]:
    """``status`` and ``failures`` as stated, and as the results say (`mt_eval.harness.outcome`: a negative
    control's error is the refusal it asks for, not a failure); absent ones (older cards) are not checked."""
    from mt_eval.corpus.model import entry_key
    from mt_eval.harness.card_results import ResultsOnDisk
    from mt_eval.harness.outcome import failures_of

    negatives = set() if card.families is None else {n.id for n in card.families.negatives}
    counted = len(keys) - (sum(map(negatives.__contains__, keys)) if negatives else 0)
    failed = [r for r in failing if entry_key(r.id) not in negatives] if negatives else failing
    out: dict[str, tuple[object, object]] = {}
    if card.status is not None:
        out["$.status"] = (card.status, "complete" if not failed else "failed" if len(failed) == counted else "partial")
    if card.failures is not None:
        said = [(f.message, f.count, f.example_id) for f in card.failures]
        actual = [(f.message, f.count, entry_key(f.example_id)) for f in failures_of(failed)]
        if said != actual and isinstance(card.results, ResultsOnDisk) and _failures_in_any_order(said, failed):
            actual = said  # (a log is in completion order; the run named examples in corpus order)
        if said != actual:  # (in words: the two lists of failures would make an unreadable line)
            words = _failures_in_words(said), _failures_in_words(actual)
            out["$.failures"] = words if words[0] != words[1] else (
                words[0], words[1] + " (not the same messages, counts or example ids)")
    return out


def _failures_in_any_order(said: list[tuple[str, int, str]], failed: list[CardResult]) -> bool:
    """Whether ``said`` are the failures of ``failed`` read in another order: a card that references its log has
    its results in the order they completed, while the run named each message's first entry in corpus order and
    put equal counts in that order. So: the same messages and counts, most frequent first, and each example an
    entry that failed with its message."""
    from mt_eval.corpus.model import entry_key

    failed_ids: dict[str, set[str]] = {}
    for failure in failed:
        failed_ids.setdefault(str(failure.error), set()).add(entry_key(failure.id))
    counts = [count for _, count, _ in said]
    return (counts == sorted(counts, reverse=True) and len(said) == len(failed_ids)
            and {message for message, _, _ in said} == failed_ids.keys()
            and all(count == len(failed_ids[message]) and entry_key(example) in failed_ids[message]
                    for message, count, example in said))


def _failures_in_words(failures: list[tuple[str, int, str]]) -> str:
    if not failures:
        return "no failures"
    from mt_eval.corpus.model import plural

    entries = sum(count for _, count, _ in failures)
    return f"{plural(len(failures), 'distinct error')} on {plural(entries, 'entry', 'entries')}"


def _keys(ids: list[Any]) -> list[str]:
    from mt_eval.corpus.model import entry_key

    return list(map(entry_key, ids))
