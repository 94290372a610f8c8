"""Publishing 10,000 run cards and rendering the board, against a bare ``executemany`` of the same rows.

Synthetic but genuine cards (`mt_eval.leaderboard.synthetic`: real corpus files, scores from the harness's
scorer, sealed) are written to card files. **Publishing** is timed end to end as ``mt-eval publish`` does it
for many cards (`mt_eval.leaderboard.bulk.publish_cards`): read each card file; check its format, content
hash, schema (the `RunCard` and `MethodCard` types) and tallies; check it against its corpus (sha256, and
every result id in it; each corpus read once); re-verify its family, latency and gate records; apply the
headline gate under the shipped policy; settle the method card; build the row; store the rows in batches of
1,000, one transaction each, duplicates refused by content hash and run id. Everything but the
recomputation of the metrics, which is timed on its own below. The baseline, interleaved with it in the
same run, inserts the identical rows into the same schema with one DB-API ``executemany``.

Recomputing the metrics (sacrebleu over each card's predictions, with its 200 bootstrap resamples) is the
rest of `mt-eval verify`: it is timed per card in this process and in bulk (``mt-eval publish`` of many
cards: a pool of worker processes), on a sample. Then the board is built and rendered from the store, and
the weight of the page for 1,000 rows is measured.

Targets: publish rate (end to end, as above) ≥ 0.5× the executemany rate; the page for 1,000 rows ≤ 1 MiB.
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


def build_cards(directory: Path, count: int, entries: int) -> list[Path]:
    """``count`` sealed cards on four corpus files, each written to its own card file."""
    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    rng = random.Random(7)
    factories = [CardFactory(write_corpus(directory / f"corpus-{i}.json", entries=entries, seed=i,
                                          pair=("eng", "spa") if i % 2 == 0 else ("eng", "fra")), resamples=200)
                 for i in range(4)]
    classes = [("pipeline", "S"), ("raw-llm", "A1"), ("coached-llm", "A1"), ("api", "A2"), ("custom-plugin", "O")]
    (directory / "cards").mkdir()
    paths = []
    for index in range(count):
        factory = factories[index % len(factories)]
        method_class, dependency = classes[rng.randrange(len(classes))]
        card = factory.card(f"method-{index // len(factories):05d}", quality=rng.choice([0.2, 0.4, 0.6, 0.8, 1.0]),
                            variant=rng.randrange(6), method_class=method_class, dependency_class=dependency,
                            run_id=f"bench-{index:06d}")
        path = directory / "cards" / f"card-{index:05d}.json"
        path.write_bytes(msgspec.json.encode(card))
        paths.append(path)
    return paths


def publish(paths: list[Path], db: str, *, recompute: bool = False) -> tuple[float, list[dict[str, object]]]:
    """Seconds to publish ``paths`` into a new store as `mt-eval publish` does; the records stored."""
    from mt_eval.leaderboard.bulk import Options, publish_cards
    from mt_eval.leaderboard.store import open_store

    open_store(db).close()  # the schema, made outside the timing (as for the baseline)
    started = time.perf_counter()
    with open_store(db) as store:  # opened and closed inside the timing, as `mt-eval publish` does
        result = publish_cards(store, paths, Options(no_input=True, recompute=recompute))
    elapsed = time.perf_counter() - started
    refused = [c for c in result.cards if c.outcome is None or c.outcome.status != "published"]
    if refused or result.store_error:
        raise SystemExit(f"a synthetic card was not published: {refused[0].error if refused else result.store_error}")
    return elapsed, stored_rows(db)


def stored_rows(db: str) -> list[dict[str, object]]:
    """The rows a store holds (for the baseline to insert the very same)."""
    from mt_eval.leaderboard.store import COLUMNS

    connection = sqlite3.connect(db)
    try:
        return [dict(zip(COLUMNS, row, strict=True))
                for row in connection.execute(f"SELECT {', '.join(COLUMNS)} FROM cards ORDER BY id")]
    finally:
        connection.close()


def store_alone(records: list[dict[str, object]], db: str) -> float:
    """The store's share: duplicate checks and inserts of rows already built, one transaction per 1,000."""
    from mt_eval.leaderboard.publish import now
    from mt_eval.leaderboard.store import open_store

    with open_store(db) as store:
        started = time.perf_counter()
        for start in range(0, len(records), BATCH):
            outcomes = store.publish(records[start:start + BATCH], now())
            assert all(o.status == "published" for o in outcomes)
        return time.perf_counter() - started


def bare_executemany(records: list[dict[str, object]], db: str) -> float:
    """The same rows into the same schema with one DB-API executemany in one transaction (connecting and
    closing included, as for publishing)."""
    from mt_eval.leaderboard.store import COLUMNS, open_store

    open_store(db).close()  # the same schema, indexes and constraints
    rows = [tuple(record[column] for column in COLUMNS) for record in records]
    started = time.perf_counter()
    connection = sqlite3.connect(db)
    connection.executemany(f"INSERT INTO cards ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                           rows)
    connection.commit()
    connection.close()
    return time.perf_counter() - started


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
        page = index_page(board, detail_pages=True)
        rendered = time.perf_counter() - started
        thousand = index_page(build_board(rows[:1000]), detail_pages=True)
    return built, rendered, len(page.encode()), len(thousand.encode())


def recompute_sample(paths: list[Path], directory: Path, sample: int) -> tuple[float, float]:
    """Seconds per card for the metrics' recomputation: one card after another in this process (the rest of
    `mt-eval verify`), and within a bulk publish of ``sample`` cards with its pool of worker processes (start
    included), less that publish without recomputation."""
    from mt_eval.harness.verify import check_card, verify_card

    chosen = paths[:: max(1, len(paths) // sample)][:sample]
    few = chosen[:50]
    started = time.perf_counter()
    for path in few:
        assert verify_card(path).ok
    whole = time.perf_counter() - started
    started = time.perf_counter()
    for path in few:
        assert check_card(path).ok
    sequential = (whole - (time.perf_counter() - started)) / len(few)
    bulk, _ = publish(chosen, str(directory / "recomputed.db"), recompute=True)
    rest, _ = publish(chosen, str(directory / "not-recomputed.db"))
    return sequential, (bulk - rest) / len(chosen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, default=10_000, help="cards to publish (default 10,000)")
    parser.add_argument("--entries", type=int, default=30, help="scored entries per card (default 30, the fewest the "
                        "shipped gate policy allows a headline; each card also has 2 canaries and 2 negative controls)")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved repetitions, medians (default 5)")
    parser.add_argument("--sample", type=int, default=400, help="cards whose metrics are recomputed (default 400)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mt-eval-bench-board-") as scratch:
        directory = Path(scratch)
        started = time.perf_counter()
        paths = build_cards(directory, args.cards, args.entries)
        size = sum(p.stat().st_size for p in paths) / len(paths)
        print(f"built {len(paths):,} synthetic card files ({size / 1024:.1f} KiB each) in "
              f"{time.perf_counter() - started:.1f} s")
        _, records = publish(paths, str(directory / "warm-up.db"))  # first reads of the files; imports
        load_before = os.getloadavg()
        published, bare, stored = [], [], []
        for attempt in range(args.repeat):  # interleaved, so all see the same load
            published.append(publish(paths, str(directory / f"published-{attempt}.db"))[0])
            bare.append(bare_executemany(records, str(directory / f"baseline-{attempt}.db")))
            stored.append(store_alone(records, str(directory / f"stored-{attempt}.db")))
        publishing, baseline, storing = (statistics.median(x) for x in (published, bare, stored))
        ratio = statistics.median(b / p for b, p in zip(bare, published, strict=True))  # paired: same load
        built, rendered, page_bytes, thousand_bytes = render(str(directory / "published-0.db"))
        sequential, bulk = recompute_sample(paths, directory, args.sample)
    count = len(paths)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load} (before the timed runs: {', '.join(f'{x:.2f}' for x in load_before)}); "
          f"{os.cpu_count()} cores; medians of {args.repeat} interleaved runs (the ratio: of each run's ratio)")
    print(f"bare executemany, same rows  : {baseline:7.2f} s  {count / baseline:9,.0f} rows/s")
    print(f"mt-eval publish, end to end  : {publishing:7.2f} s  {count / publishing:9,.0f} cards/s  (read the file; "
          "format, content hash, schema, tallies, corpus sha256 and ids, records, gate; row; store, 1,000 a "
          "transaction; all but recomputing the metrics)")
    print(f"publish rate / executemany   : {ratio:.2f}x  (target ≥ {TARGET_RATIO}x: "
          f"{'met' if ratio >= TARGET_RATIO else 'MISSED'})")
    print(f"  the store alone            : {storing:7.2f} s  = {baseline / storing:.2f}x the executemany (rows "
          "already built)")
    print(f"metrics recomputed per card  : {sequential * 1000:7.1f} ms one after another, {bulk * 1000:.1f} ms in a "
          f"bulk publish ({os.cpu_count()} worker processes; {count * bulk:,.0f} s for {count:,} cards): not in the "
          "ratio above")
    print(f"board from the store         : {built:7.2f} s for {count:,} rows ({built / baseline:.2f}x the executemany)")
    print(f"page rendered                : {rendered:7.2f} s ({rendered / baseline:.2f}x the executemany), "
          f"{page_bytes / 1024 / 1024:.2f} MiB for {count:,} rows")
    print(f"page weight for 1,000 rows   : {thousand_bytes / 1024:7.0f} KiB  (target ≤ 1024 KiB: "
          f"{'met' if thousand_bytes <= TARGET_PAGE_BYTES else 'MISSED'})")
    record([Figure("leaderboard", "publish rate vs bare executemany", ours=f"{count / publishing:,.0f} cards/s",
                   baseline=f"{count / baseline:,.0f} rows/s", value=ratio, target=at_least(TARGET_RATIO)),
            Figure("leaderboard", "page weight, 1,000 rows", ours=f"{thousand_bytes / 1024:,.0f} KiB",
                   value=thousand_bytes / 1024, target=at_most(TARGET_PAGE_BYTES / 1024, " KiB"))])
    missed = ratio < TARGET_RATIO or thousand_bytes > TARGET_PAGE_BYTES
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
