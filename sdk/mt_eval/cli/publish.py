"""``mt-eval publish CARD…``: verify run cards, gate their headlines, settle the method cards they are shown with,
and store them (`mt_eval.leaderboard.publish`, `mt_eval.leaderboard.store`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DESCRIPTION = """\
Publish run cards to the leaderboard store. Each card is verified first (mt-eval verify: content hash,
schema, corpus sha256, every metric recomputed) and its headline gated (mt-eval gate, under --policy or
the shipped policy); a card that does not verify, fails the gate, or is already published, is refused.
The board shows the method card the run recorded, with --method-card laid over it. A run without a
method card (nothing beyond method.json) uses method_card.json beside the run card, else you are
asked for description, paradigm, tools used, open source and its address, and licence, and the answers are
written to method_card.json beside the run card (--no-input: fail instead, listing what is missing)."""
EPILOG = """\
examples (after nox -s demo, which writes runs/demo and runs/demo-rules):
  mt-eval publish runs/demo/card.json                        # into the default store
  mt-eval publish runs/demo-rules/card.json --method-card examples/rules-eng-spa/method_card.json --no-input
  mt-eval publish runs/*/card.json --db team-board.db --json # every run, into another store

The store: --db URL or FILE, else $MT_EVAL_DB, else leaderboard.db in your data directory. A team or public
board lives in PostgreSQL: --db postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description, parser.epilog = DESCRIPTION, EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("cards", nargs="+", metavar="CARD", help="run card(s) to publish (card.json of a run)")
    parser.add_argument("--method-card", metavar="FILE", help="method card to show, laid over the run card's own")
    parser.add_argument("--db", metavar="URL", help="store: sqlite:///PATH, postgresql://USER@HOST/DB or a file path "
                                                    "(default: $MT_EVAL_DB, else the user data directory)")
    parser.add_argument("--corpus", metavar="FILE", help="corpus to verify against (default: the card's path)")
    parser.add_argument("--policy", metavar="FILE", help="headline gate policy (default: the shipped one; see "
                                                        "mt-eval gate --help)")
    parser.add_argument("--extension", action="append", default=[], metavar="MODULE",
                        help="enable an extension so that the metrics it registers are verified (repeatable)")
    parser.add_argument("--no-input", action="store_true", help="never ask: fail listing missing method-card fields")
    parser.add_argument("--json", action="store_true", help="print the outcome of each card as JSON")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every card was published, 1 when any was refused or could not be read."""
    import msgspec

    from mt_eval.harness.policy import PolicyError, load_policy
    from mt_eval.leaderboard.publish import Prepared, PublishError, now, prepare, report
    from mt_eval.leaderboard.store import StoreError, open_store

    try:
        policy = load_policy(args.policy)
    except PolicyError as exc:
        print(f"mt-eval publish: {exc}; nothing was published", file=sys.stderr)
        return 1
    try:
        store = open_store(args.db)
    except StoreError as exc:
        print(f"mt-eval publish: {exc}; nothing was published", file=sys.stderr)
        return 1
    from mt_eval.progress import RunProgress

    failed = 0
    prepared: list[Prepared] = []

    progress = RunProgress(len(args.cards), label="verifying", quiet=args.json or len(args.cards) < 20)
    with store:
        for name in args.cards:
            try:
                prepared.append(prepare(Path(name), method_card=args.method_card, corpus=args.corpus,
                                        extensions=args.extension, no_input=args.no_input, policy=policy))
            except PublishError as exc:
                failed += 1
                print(f"mt-eval publish: {name}: {exc}", file=sys.stderr)
            progress.advance(False)
        progress.close()
        if not prepared:
            return 1
        try:
            outcomes = store.publish([p.record for p in prepared], now())
        except StoreError as exc:
            print(f"mt-eval publish: {exc}; nothing was published", file=sys.stderr)
            return 1
    reports = [report(p, o) for p, o in zip(prepared, outcomes, strict=True)]
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(reports), indent=2).decode())
    else:
        for line in reports:
            print(line["message"], file=sys.stdout if line["status"] == "published" else sys.stderr)
        print(f"store: {store.where}")
    refused = sum(o.status != "published" for o in outcomes)
    return 1 if failed or refused else 0
