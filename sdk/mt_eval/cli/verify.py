"""``mt-eval verify CARD…``: recompute every figure of a run card from its results and its corpus."""

from __future__ import annotations

import argparse
from typing import Any

from mt_eval.cli.arguments import add_corpus_arguments, card_argument


def add_arguments(verify: argparse.ArgumentParser) -> None:
    verify.description = ("Re-verify run cards: the card's version and content_sha256, its schema and tallies (how "
                          "the run ended: status and failures; a result for every entry it ran), the "
                          "corpus file's sha256, and every metric recomputed from the card's predictions and the "
                          "corpus's references (the card's own resamples and seed), and the predictions.txt beside "
                          "the card, when there is one, against its results. Each mismatch is reported with its JSON "
                          "path.")
    verify.formatter_class = argparse.RawDescriptionHelpFormatter
    verify.epilog = ("examples (after nox -s demo, or mt-eval run --demo --out runs/demo):\n"
                     "  mt-eval verify runs/demo/card.json\n"
                     "  mt-eval verify runs/demo/card.json --corpus examples/data/eng-spa-demo.json\n"
                     "  mt-eval verify runs/*/card.json --json\n"
                     "\nexit status: 0 every card verifies; 1 a card does not (or cannot be read); 2 usage; 130 "
                     "interrupted (the reports of\nthe cards verified before it are printed, but with --json), 143 "
                     "stopped by SIGTERM and 129 by SIGHUP (as by Ctrl-C)")
    verify.add_argument("cards", nargs="+", type=card_argument, metavar="CARD",
                        help="run card(s) (card.json, or the run directory holding it)")
    add_corpus_arguments(verify, selection=False, title="the corpus (default: the files the card records, as "
                                                        "written or beside the card, read as it records)")
    verify.add_argument("--extension", action="append", default=[], metavar="MODULE",
                        help="enable an extension so that the metrics it registers are recomputed too (repeatable)")
    verify.add_argument("--json", action="store_true", help="print a JSON report")
    verify.add_argument("--quiet", action="store_true", help="print only the cards that do not verify")


def run(args: argparse.Namespace) -> int:
    import sys

    from mt_eval.cli.arguments import corpus_instead
    from mt_eval.errors import InterruptedBefore, UsageError
    from mt_eval.harness.verify import as_json, render, verify_card

    try:
        corpus = corpus_instead(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.harness.verify_corpus import CorpusCache

    reports, corpora = [], CorpusCache()  # (each corpus read once for every card: --corpus - can be read only once)
    try:
        for card in args.cards:
            reports.append(report := verify_card(card, corpus=corpus, extensions=args.extension, corpora=corpora))
            if not args.json and not (args.quiet and report.ok):  # (each card as it is verified: a Ctrl-C keeps
                print(escaped_for_terminal(render(report)), flush=True)  # it; values quoted: none acts on the terminal)
    except KeyboardInterrupt as exc:
        raise InterruptedBefore(_interrupted_words(args, reports)) from exc
    if args.json:
        from mt_eval.cli.json_output import json_text

        sys.stdout.write(json_text([as_json(r) for r in reports]))  # (a card's name that is not UTF-8 escaped)
    return 0 if all(r.ok for r in reports) else 1


def _interrupted_words(args: argparse.Namespace, reports: list[Any]) -> str:
    """What a Ctrl-C kept: the cards verified (and how they did), and the first of those left."""
    done, total = len(reports), len(args.cards)
    failed = sum(1 for r in reports if not r.ok)
    verdicts = ("; no report was written (--json writes it whole, at the end)" if args.json else
                " (their reports are above)" if not args.quiet else
                f" ({failed} did not verify, reported above)" if failed else " (each of them verified)")
    told = f"; {failed} of them did not verify" if failed and not args.quiet else ""
    rest = (f"; {total - done} not verified, from {args.cards[done]}: verify them again" if done < total else "")
    return f"\nmt-eval verify: interrupted after verifying {done} of {total} cards{verdicts}{told}{rest}"
