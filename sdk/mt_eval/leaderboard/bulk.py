"""Publishing many run cards at once (``mt-eval publish runs/*/card.json``), using every core.

Preparing a card — reading it, verifying it (format, content hash, schema, tallies, corpus; then its metrics
recomputed), settling its method card and building its row — is independent of every other card. When
there is enough of that work for a pool of processes to pay (`pooled`), chunks of `CHUNK` cards are prepared
by worker processes (one per core this process may use, `mt_eval.leaderboard.preparers`), each reading every
corpus once for all its cards (`CorpusCache`), while this process stores the chunks already prepared, in
order, one transaction a batch: preparing overlaps storing, and the store has one writer. Otherwise the
cards are prepared here, with the same functions, and give the same rows and the same refusals. A card whose
method card must be asked for (the wizard) is prepared here, where the terminal is, and stored last. A card
that cannot be published is reported and the others go on, unless ``fail_fast`` asks to stop at the first
one. A store error, Ctrl-C or a stop keeps what was stored before it, and leaves no worker process behind.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.harness.verify import check_card, check_records, import_checks, verify_card
from mt_eval.harness.verify_corpus import CorpusCache
from mt_eval.interrupts import CutShort
from mt_eval.leaderboard import StoreError
from mt_eval.leaderboard.preparers import Preparers
from mt_eval.leaderboard.publish import MethodCardMissing, Prepared, PublishError, complete, now, read_card_file
from mt_eval.leaderboard.store import COLUMNS, Outcome, Store

BATCH = 1000
# Cards from which a pool of processes prepares them. Starting and ending two forked workers takes ~20 ms, and
# each card sent back costs this process a little (measured with benchmarks/leaderboard.py's cards: 30 entries,
# 14 KiB). Recomputing a card's metrics takes ~12 ms, so the pool pays from a few cards; the other checks take
# ~0.2 ms a card, and the pool gained nothing below a few hundred cards on 2 cores, less when they were busy.
PARALLEL_FROM = 8
PARALLEL_FROM_UNSCORED = 512  # cards from which a pool prepares them when the metrics are not recomputed
CHUNK = 64  # cards a worker prepares and sends at a time: ~1 MiB for cards of 30 entries, one pipe buffer (smaller
# messages cost this process less to read than 4 MiB ones, which it copied more and faulted in page by page)


@dataclass
class Published:
    """What became of one card: refused before the store (``error``), or the store's ``outcome``."""

    path: Path
    prepared: Prepared | None = None
    error: str | None = None
    outcome: Outcome | None = None


@dataclass
class BulkResult:
    cards: list[Published] = field(default_factory=list)
    store_error: StoreError | None = None  # the store failed: the batches before it are stored, no others
    interrupted: bool = False  # Ctrl-C: the batches before it are stored, no others
    cut_short: bool = False  # a second Ctrl-C cut a commit short: whether its batch was stored is not known
    stopped_at: Published | None = None  # ``fail_fast``: the first card not published; none after it stored

    @property
    def stored(self) -> int:
        return sum(1 for c in self.cards if c.outcome is not None and c.outcome.status == "published")


@dataclass
class Options:
    """How the cards are verified and shown (as `mt-eval publish`'s flags say)."""

    method_card: str | None = None
    corpus: str | None = None
    extensions: Sequence[str] = ()
    no_input: bool = False
    ask: Any = None
    policy: Any = None  # the headline gate's `ResolvedPolicy` (None: the shipped one)
    fail_fast: bool = False  # stop at the first card that cannot be published (the ones before it stay)
    recompute: bool = True  # step 6 of verification; False only to time the rest on its own
    workers: int | None = None  # processes preparing cards (default: one per core this process may use)


def publish_cards(store: Store, paths: Sequence[Path], options: Options | None = None, *,
                  progress: Callable[[], Any] | None = None, on_refused: Callable[[Published], None] | None = None,
                  batch: int | None = None) -> BulkResult:
    """Prepare and store ``paths``, ``batch`` cards a transaction (default: a quarter of them, at most
    `BATCH`). ``progress()`` makes the progress display (once the workers have started: it may run a thread,
    which a forked worker must not inherit); its ``advance(failed)`` is called as each card is prepared.
    ``on_refused`` hears of each card refused before the store."""
    batch = batch or max(1, min(BATCH, len(paths) // 4))
    options = options or Options()
    if options.policy is None:  # resolved once, not once a card
        from mt_eval.harness.policy import shipped_policy

        options = dataclasses.replace(options, policy=shipped_policy())
    result = BulkResult([Published(path) for path in paths])
    asked: list[Published] = []  # cards whose method card the wizard must ask for, here
    shown: Any = None

    def settle(item: Published, prepared: Prepared | None, error: PublishError | None) -> None:
        item.prepared, item.error = prepared, None if error is None else str(error)
        if error is not None and on_refused is not None:
            on_refused(item)
        if shown is not None:
            shown.advance(error is not None)

    try:
        with _prepared(paths, options, store, batch) as chunks:
            shown = progress() if progress is not None else None
            done, ready = 0, []
            for chunk in chunks:
                items, done = result.cards[done:done + len(chunk)], done + len(chunk)
                stop = None
                for index, (item, (prepared, error)) in enumerate(zip(items, chunk, strict=True)):
                    if isinstance(error, MethodCardMissing) and not options.no_input:
                        asked.append(item)
                        continue
                    settle(item, prepared, error)
                    if error is not None and options.fail_fast:
                        stop, items = item, items[:index]
                        break
                ready += items
                if stop is not None or len(ready) >= batch or done == len(paths):
                    if not _stored_all(result, store, ready, options, stop):
                        return result
                    ready = []
        corpora = CorpusCache()
        stop = None
        for index, item in enumerate(asked):
            settle(item, *_prepare(item.path, options, corpora, interactive=True))
            if item.error is not None and options.fail_fast:
                stop, asked = item, asked[:index]
                break
        _stored_all(result, store, asked, options, stop)
    except KeyboardInterrupt as exc:  # the workers are ended by now; the transactions committed before it stay
        result.interrupted, result.cut_short = True, isinstance(exc, CutShort)
    return result


def _stored_all(result: BulkResult, store: Store, items: Sequence[Published], options: Options,
                stop: Published | None) -> bool:
    """Store ``items`` (those before ``stop``, the first card refused before the store, with ``fail_fast``);
    False when publishing must stop here: a store error, or a card refused with ``fail_fast``."""
    result.store_error = _store(store, items, stop_at_refusal=options.fail_fast)
    if options.fail_fast:
        result.stopped_at = next((item for item in items if item.prepared is not None and (
            item.outcome is None or item.outcome.status == "conflict")), stop)  # (a duplicate: stored already)
    return result.store_error is None and result.stopped_at is None


def _store(store: Store, items: Sequence[Published], *, stop_at_refusal: bool = False) -> StoreError | None:
    """Store the prepared ones of ``items`` in one transaction; each gets its outcome (with
    ``stop_at_refusal``, those up to the first refused by the store)."""
    ready = [item for item in items if item.prepared is not None and item.outcome is None]
    if not ready:
        return None
    def committed(outcomes: list[Outcome]) -> None:  # (as the transaction commits: a Ctrl-C then loses nothing)
        for item, outcome in zip(ready, outcomes, strict=False):
            item.outcome = outcome
            if item.prepared is not None:
                item.prepared.record = {}  # stored: what is left is what the report says

    try:
        store.publish([item.prepared.record for item in ready if item.prepared is not None], now(),
                      stop_at_refusal=stop_at_refusal, committed=committed)
    except StoreError as exc:
        return exc
    return None


def _prepare(path: Path, options: Options, corpora: CorpusCache, *, interactive: bool
             ) -> tuple[Prepared | None, PublishError | None]:
    """One card made ready for the store, or why it cannot be published."""
    try:
        raw = read_card_file(path)
        if options.recompute:
            verification = verify_card(path, corpus=options.corpus, extensions=options.extensions, raw=raw,
                                       corpora=corpora)
        else:
            verification = check_card(path, corpus=options.corpus, raw=raw, corpora=corpora)
            check_records(verification)
        return complete(path, verification, method_card=options.method_card,
                        no_input=options.no_input or not interactive, ask=options.ask, policy=options.policy), None
    except PublishError as exc:
        return None, exc
    except Exception as exc:  # a fault in reading one card must not cost the batch the others
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return None, PublishError(f"checking it failed unexpectedly ({type(exc).__name__}: {exc}, at "
                                  f"{Path(where.filename).name}:{where.lineno}); this is a fault of mt-eval, please "
                                  "report it with the card")


Chunk = list[tuple[Prepared | None, PublishError | None]]


def _prepare_chunk(paths: Sequence[Path], state: tuple[Options, CorpusCache]) -> Chunk:
    """A chunk of cards prepared without asking (a card that needs the wizard comes back for it)."""
    options, corpora = state
    return [_prepare(path, options, corpora, interactive=False) for path in paths]


RECORD_COLUMNS = tuple(column for column in COLUMNS if column != "published_at")  # the store adds that one
# A card prepared in a worker as it crosses to this process: its record's values in `RECORD_COLUMNS` order (the JSON
# columns as bytes), its method card's source, what the report says of it and whether it is hidden; or None and
# why it cannot be published. Plain values pickle and unpickle in a few microseconds; a `Prepared` (a dataclass
# holding a path and a dict of text) took several times that on each side.
Sent = tuple[tuple[Any, ...] | None, Any, Any, bool]


def _prepare_to_send(paths: Sequence[Path], state: tuple[Options, CorpusCache]) -> list[Sent]:
    """A chunk prepared in a worker, in the form that crosses to this process (`_received`)."""
    sent: list[Sent] = []
    for prepared, error in _prepare_chunk(paths, state):
        if prepared is None:
            sent.append((None, error, None, False))
        else:
            record = prepared.record
            sent.append((tuple([record[column] for column in RECORD_COLUMNS]), prepared.card_source, prepared.what,
                         prepared.hidden))
    return sent


def _received(paths: Sequence[Path], sent: list[Sent]) -> Chunk:
    """A chunk as `_prepare_to_send` sent it, made `Prepared` again."""
    return [(None, source) if values is None else
            (Prepared(path, dict(zip(RECORD_COLUMNS, values, strict=True)), source, what, hidden), None)
            for path, (values, source, what, hidden) in zip(paths, sent, strict=True)]


def pooled(cards: int, recompute: bool, workers: int) -> bool:
    """Whether ``cards`` are prepared by a pool of ``workers`` processes (see `PARALLEL_FROM`) rather than here."""
    return workers >= 2 and cards >= (PARALLEL_FROM if recompute else PARALLEL_FROM_UNSCORED)


def usable_cores() -> int:
    """The cores this process may run on (a container or ``taskset`` may allow fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _worker_state(options: Options) -> tuple[Options, CorpusCache]:
    return options, CorpusCache()


@contextmanager
def _prepared(paths: Sequence[Path], options: Options, store: Store, batch: int) -> Iterator[Iterator[Chunk]]:
    """The cards prepared, chunk by chunk in order: by worker processes when there are many, else here."""
    workers = options.workers or usable_cores()
    if not pooled(len(paths), options.recompute, workers):
        state = (options, CorpusCache())
        yield (_prepare_chunk(paths[start:start + batch], state) for start in range(0, len(paths), batch))
        return
    size = max(1, min(CHUNK, len(paths) // (workers * 4)))  # several chunks a worker, so none waits long
    chunks = [paths[start:start + size] for start in range(0, len(paths), size)]
    store.engine.dispose()  # no database connection crosses a fork
    import_checks()  # once here, not in each worker
    with Preparers(chunks, _prepare_to_send, functools.partial(_worker_state, options), workers) as preparers:
        yield (_received(chunk, sent) for chunk, sent in zip(chunks, preparers.results(), strict=False))
