"""Publishing 10,000 run cards and rendering the board, against a bare ``executemany`` of the same rows.

Synthetic but genuine cards (`mt_eval.leaderboard.synthetic`: real corpus files, scores from the harness's
scorer, sealed) are read as publishing reads them (format, content hash, schema, tallies) and their rows
built; then the store publishes them in batches of 1,000 (duplicate checks by content hash and run id, one
transaction per batch). The baseline, interleaved with it in the same run on the same schema, inserts the
identical rows with one DB-API ``executemany``. Reading the cards is reported on its own and together with
storing; recomputing the metrics (the rest of `mt-eval verify`, once per card, independent of the store) is
timed on a sample. Then the board is built and rendered from the store, and the
weight of the page for 1,000 rows is measured.

Targets: publish rate ≥ 0.5× the executemany rate; the page for 1,000 rows ≤ 1 MiB.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec
from report import Figure, at_least, at_most, record

TARGET_RATIO = 0.5
TARGET_PAGE_BYTES = 1024 * 1024
BATCH = 1000


def build_cards(directory: Path, count: int, entries: int) -> tuple[list[bytes], dict[str, int]]:
    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    rng = random.Random(7)
    factories = [CardFactory(write_corpus(directory / f"corpus-{i}.json", entries=entries, seed=i,
                                          pair=("eng", "spa") if i % 2 == 0 else ("eng", "fra")), resamples=200)
                 for i in range(4)]
    classes = [("pipeline", "S"), ("raw-llm", "A1"), ("coached-llm", "A1"), ("api", "A2"), ("custom-plugin", "O")]
    cards = []
    for index in range(count):
        factory = factories[index % len(factories)]
        method_class, dependency = classes[rng.randrange(len(classes))]
        card = factory.card(f"method-{index // len(factories):05d}", quality=rng.choice([0.2, 0.4, 0.6, 0.8, 1.0]),
                            variant=rng.randrange(6), method_class=method_class, dependency_class=dependency,
                            run_id=f"bench-{index:06d}")
        cards.append(msgspec.json.encode(card))
    sizes = {str(f.corpus.path): len(f.corpus.entries) for f in factories}
    return cards, sizes


def read_cards(cards: list[bytes], sizes: dict[str, int]) -> tuple[float, list[dict[str, object]]]:
    """Each card read as publishing reads it (format, content hash, schema, tallies) and its row built;
    (seconds, the store records)."""
    from mt_eval.harness.verify import read_card
    from mt_eval.leaderboard.rows import build_record, build_row

    def record(raw: bytes) -> dict[str, object]:
        checked = read_card("card.json", raw)
        if not checked.ok or checked.card is None or checked.data is None:
            raise SystemExit(f"a synthetic card does not verify: {checked.problems}")
        card = checked.card
        row = build_row(checked.data, card, card.method.card, "run card", sizes[card.corpus.path])
        return build_record(row, card.content_sha256, msgspec.json.encode(checked.data, order="sorted"))

    record(cards[0])  # first-use imports are not what is measured (nor in the baseline)
    started = time.perf_counter()
    records = [record(raw) for raw in cards]
    return time.perf_counter() - started, records


def store_publish(records: list[dict[str, object]], db: str) -> float:
    """The store's publish: duplicate checks and inserts, one transaction per 1,000 cards."""
    from mt_eval.leaderboard.publish import now
    from mt_eval.leaderboard.store import open_store

    with open_store(db) as store:
        started = time.perf_counter()
        for start in range(0, len(records), BATCH):
            outcomes = store.publish(records[start:start + BATCH], now())
            assert all(o.status == "published" for o in outcomes)
        return time.perf_counter() - started


def bare_executemany(records: list[dict[str, object]], db: str) -> float:
    """The same rows into the same schema with one DB-API executemany in one transaction."""
    from mt_eval.leaderboard.store import COLUMNS, open_store

    open_store(db).close()  # the same schema, indexes and constraints
    rows = [tuple(record.get(column, "2026-01-01T00:00:00+00:00") for column in COLUMNS) for record in records]
    connection = sqlite3.connect(db)
    started = time.perf_counter()
    connection.executemany(f"INSERT INTO cards ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                           rows)
    connection.commit()
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def render(db: str) -> tuple[float, float, int, int]:
    """(seconds to read and build the board, seconds to render its page, page bytes for all rows and for 1,000)."""
    from mt_eval.leaderboard.board import build_board
    from mt_eval.leaderboard.html import index_page
    from mt_eval.leaderboard.store import open_store

    with open_store(db, create=False) as store:
        started = time.perf_counter()
        rows = store.rows()
        board = build_board(rows)
        built = time.perf_counter() - started
        started = time.perf_counter()
        page = index_page(board)
        rendered = time.perf_counter() - started
        thousand = index_page(build_board(rows[:1000]))
    return built, rendered, len(page.encode()), len(thousand.encode())


def recompute_sample(cards: list[bytes], directory: Path, sample: int) -> float:
    """Seconds per card for the whole of `mt-eval verify` (metrics recomputed) over ``sample`` cards."""
    from mt_eval.harness.verify import verify_card

    chosen = cards[:: max(1, len(cards) // sample)][:sample]
    started = time.perf_counter()
    for raw in chosen:
        assert verify_card(directory / "card.json", raw=raw).ok
    return (time.perf_counter() - started) / len(chosen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, default=10_000, help="cards to publish (default 10,000)")
    parser.add_argument("--entries", type=int, default=20, help="entries per card (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions, medians (default 3)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mt-eval-bench-board-") as scratch:
        directory = Path(scratch)
        started = time.perf_counter()
        cards, sizes = build_cards(directory, args.cards, args.entries)
        print(f"built {len(cards):,} synthetic cards ({sum(map(len, cards)) / len(cards) / 1024:.1f} KiB each) in "
              f"{time.perf_counter() - started:.1f} s")
        reading, records = read_cards(cards, sizes)
        stored, bare = [], []
        for attempt in range(args.repeat):  # interleaved, so both see the same load
            stored.append(store_publish(records, str(directory / f"published-{attempt}.db")))
            bare.append(bare_executemany(records, str(directory / f"baseline-{attempt}.db")))
        storing, baseline = statistics.median(stored), statistics.median(bare)
        built, rendered, page_bytes, thousand_bytes = render(str(directory / "published-0.db"))
        per_card = recompute_sample(cards, directory, 50)
    count = len(cards)
    ratio = baseline / storing
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load} ({os.cpu_count()} cores); medians of {args.repeat} interleaved runs")
    print(f"bare executemany, same rows  : {baseline:7.2f} s  {count / baseline:9,.0f} rows/s")
    print(f"store publish, 1,000 a batch : {storing:7.2f} s  {count / storing:9,.0f} cards/s")
    print(f"publish rate / executemany   : {ratio:.2f}x  (target ≥ {TARGET_RATIO}x: "
          f"{'met' if ratio >= TARGET_RATIO else 'MISSED'})")
    whole = reading + storing
    print(f"reading cards and their rows : {reading:7.2f} s  (hash, schema, tallies); reading + storing "
          f"{count / whole:,.0f} cards/s = {baseline / whole:.2f}x the executemany")
    print(f"metrics recomputed per card  : {per_card * 1000:7.1f} ms (the rest of verification, outside the store; "
          f"{count * per_card:,.0f} s for {count:,} cards)")
    print(f"board from the store         : {built:7.2f} s for {count:,} rows ({built / baseline:.2f}x the executemany)")
    print(f"page rendered                : {rendered:7.2f} s ({rendered / baseline:.2f}x the executemany), "
          f"{page_bytes / 1024 / 1024:.2f} MiB for {count:,} rows")
    print(f"page weight for 1,000 rows   : {thousand_bytes / 1024:7.0f} KiB  (target ≤ 1024 KiB: "
          f"{'met' if thousand_bytes <= TARGET_PAGE_BYTES else 'MISSED'})")
    record([Figure("leaderboard", "publish rate vs bare executemany", ours=f"{count / storing:,.0f} cards/s",
                   baseline=f"{count / baseline:,.0f} rows/s", value=ratio, target=at_least(TARGET_RATIO)),
            Figure("leaderboard", "page weight, 1,000 rows", ours=f"{thousand_bytes / 1024:,.0f} KiB",
                   value=thousand_bytes / 1024, target=at_most(TARGET_PAGE_BYTES / 1024, " KiB"))])
    missed = ratio < TARGET_RATIO or thousand_bytes > TARGET_PAGE_BYTES
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
