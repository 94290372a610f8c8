"""``mt-eval publish CARD…``: verify run cards, gate their headlines, settle the method cards they are shown with,
and store them (`mt_eval.leaderboard.bulk`, `mt_eval.leaderboard.publish`, `mt_eval.leaderboard.store`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mt_eval.cli.arguments import POSTGRES_CONNECTING
from mt_eval.cli.usage_errors import named_path

DESCRIPTION = """\
Publish run cards to the leaderboard store. Each card is verified first (mt-eval verify: content hash,
schema, corpus sha256, every metric recomputed) and its headline gated (mt-eval gate, under --policy or
the shipped policy); a card that does not verify, fails the gate, or is already published, is refused.
The board shows the method card the run recorded, with --method-card laid over it. A run without a
method card (nothing beyond method.json) uses method_card.json beside the run card, else you are
asked for description, paradigm, tools used, open source and its address, and licence, and the answers are
written to method_card.json beside the run card (--no-input: fail instead, listing what is missing)."""
EPILOG = f"""\
examples (after nox -s demo, which writes runs/demo and runs/demo-rules):
  mt-eval publish runs/demo/card.json                        # into the default store
  mt-eval publish runs/demo-rules/card.json --method-card examples/rules-eng-spa/method_card.json --no-input
  mt-eval publish runs/*/card.json --db team-board.db --json # every run, into another store
  mt-eval publish runs/*/card.json --db new-board.db --fail-fast  # stop at the first card refused

Many cards are verified by one process per core while those verified are stored, in the order given, with
progress on stderr. A card that cannot be published is reported with its path and the others go on
(--fail-fast: stop at it). Ctrl-C, a store error or a stop keeps the cards stored before it.

The store: --db URL or FILE, else $MT_EVAL_DB, else leaderboard.db in your data directory. A team or public
board lives in PostgreSQL: --db postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE.
{POSTGRES_CONNECTING}

exit status: 0 every card published; 1 a card was refused (it does not verify, fails the gate, or is published
already) or cannot be read, the store, --policy or an --extension cannot be used, or standard output cannot be
written (the cards stored are kept); 2 usage; 130 interrupted (Ctrl-C: the cards stored before it are kept);
141 the reader of standard output went away (| head)"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description, parser.epilog = DESCRIPTION, EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("cards", nargs="+", type=_card_argument, metavar="CARD",
                        help="run card(s) to publish (card.json, or the run directory holding it)")
    parser.add_argument("--method-card", metavar="FILE", help="method card to show, laid over the run card's own",
                        type=named_path)
    parser.add_argument("--db", metavar="URL", help="store: sqlite:///PATH, postgresql://USER@HOST/DB or a file path "
                                                    "(default: $MT_EVAL_DB, else the user data directory)")
    parser.add_argument("--corpus", metavar="FILE", help="corpus to verify against (default: the card's path)",
                        type=named_path)
    parser.add_argument("--policy", metavar="FILE", help="headline gate policy (default: the shipped one; see "
                                                        "mt-eval gate --help)", type=named_path)
    parser.add_argument("--extension", action="append", default=[], metavar="MODULE",
                        help="enable an extension so that the metrics it registers are verified (repeatable)")
    parser.add_argument("--no-input", action="store_true", help="never ask: fail listing missing method-card fields")
    parser.add_argument("--fail-fast", action="store_true", help="stop at the first card that cannot be published; "
                        "one stored already does not stop it (default: report it and publish the others)")
    parser.add_argument("--json", action="store_true", help="print the outcome of each card as JSON")


def _card_argument(text: str) -> str:
    """A run card (`mt_eval.cli.arguments.card_argument`); a database URL given as one is a usage error that names
    --db and shows no password (it had been said as a card that cannot be read, password and all)."""
    from mt_eval.cli.arguments import card_argument

    if ":" in text:
        from mt_eval.leaderboard.address import MISTYPED_SCHEME, hidden

        if MISTYPED_SCHEME.match(text.strip()):
            raise argparse.ArgumentTypeError(f"{hidden(text)!r} is the store's URL, not a run card: give it as --db "
                                             "URL")
    return card_argument(text)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every card was published, 1 when any was refused or could not be read (or standard output could
    not be written), 130 on Ctrl-C, 141 when the reader of standard output went away."""
    import tempfile

    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.errors import InterruptedBefore
    from mt_eval.leaderboard.publish import shown_path

    try:  # (verifying a card needs a directory for temporary files: none is said once, not as each card's fault)
        tempfile.gettempdir()
    except OSError:
        _none_tried(args, "no directory for temporary files can be written (set TMPDIR)")
        raise
    try:  # (Ctrl-C before a card is read: said so, not a bare "interrupted")
        from mt_eval.harness.policy import PolicyError, load_policy
        from mt_eval.leaderboard import StoreError
        from mt_eval.leaderboard.bulk import Options, publish_cards
        from mt_eval.leaderboard.store import open_store
        from mt_eval.progress import RunProgress

        try:
            policy = load_policy(args.policy)
        except PolicyError as exc:  # (it may end with a fix on a line of its own)
            said_on_stderr(f"mt-eval publish: {exc}\nmt-eval publish: nothing was published")
            _none_tried(args, "the gate policy cannot be used (--policy)")
            return 1
        if args.extension:  # enabled once here: one that cannot be is the command's error, not each card's
            from mt_eval.extensions import enable_extension, make_plugin_manager

            manager = make_plugin_manager()
            try:
                for extension in args.extension:
                    enable_extension(manager, extension)
            except Exception:
                _none_tried(args, "an extension cannot be enabled (--extension)")
                raise
        try:
            store = open_store(args.db)
        except StoreError as exc:
            said_on_stderr(f"mt-eval publish: {exc}; nothing was published")
            _none_tried(args, f"the store cannot be opened ({exc})")  # (the reason, as stderr says it)
            return 1
    except KeyboardInterrupt:
        _none_tried(args, "interrupted before any card was read")
        raise InterruptedBefore("mt-eval publish: interrupted before any card was read; nothing was published") \
            from None

    def refused(item: Any) -> None:
        print(escaped_for_terminal(f"mt-eval publish: {shown_path(item.path)}: {item.error}"), file=sys.stderr)

    shown: list[RunProgress] = []

    def progress() -> RunProgress:
        shown.append(RunProgress(len(args.cards), label="verifying", quiet=args.json or len(args.cards) < 20))
        return shown[0]

    options = Options(method_card=args.method_card, corpus=args.corpus, extensions=args.extension,
                      no_input=args.no_input, fail_fast=args.fail_fast, policy=policy)
    try:
        result = publish_cards(store, [Path(name) for name in args.cards], options, progress=progress,
                               on_refused=refused)
    finally:
        for bar in shown:
            bar.close()
        store.close_or_discard()  # a store this command created and stored nothing in is not left behind
    lost = _print_outcomes(args, result, store.where)
    status = _said_how_it_ended(args, result)
    if lost is None:
        return status
    from mt_eval.cli import output_lost

    stored = (f"{result.stored} card{'s were' if result.stored != 1 else ' was'} published all the same (stored in "
              f"{store.where}): do not publish {'them' if result.stored != 1 else 'it'} again" if result.stored
              else "nothing was published")
    lost_status = output_lost("mt-eval publish", lost, done=escaped_for_terminal(stored))
    return status if status == 130 else lost_status


def _print_outcomes(args: argparse.Namespace, result: Any, where: str) -> OSError | None:
    """Say what became of each card: on stdout the published ones and where they are (with --json, the report of
    every card given), on stderr the others. None, or the error that stopped standard output: what goes to stderr
    is still said, and the cards stay stored."""
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.leaderboard.publish import report, unstored

    lost: list[OSError] = []

    def out(text: str) -> None:
        if not lost:
            try:
                sys.stdout.write(text)
            except OSError as exc:  # (a full disk; BrokenPipeError: its reader went away)
                lost.append(exc)

    reports = [report(c.prepared, c.outcome) for c in result.cards if c.prepared and c.outcome]
    if args.json:  # every card given, in order: those refused before the store, and any not tried, too
        every = [report(c.prepared, c.outcome) if c.prepared and c.outcome else unstored(c) for c in result.cards]
        from mt_eval.cli.json_output import json_text

        out(json_text(every))  # (a card's name that is not UTF-8 written with its escapes)
    else:
        for line in reports:
            if line["status"] == "published":
                out(escaped_for_terminal(line["message"]) + "\n")
            else:
                print(escaped_for_terminal(line["message"]), file=sys.stderr)
        if reports:
            out(escaped_for_terminal(f"store: {where}") + "\n")
    if not lost:
        try:
            sys.stdout.flush()  # (what is buffered fails here, where what was stored can still be said)
        except OSError as exc:
            lost.append(exc)
    return lost[0] if lost else None


def _said_how_it_ended(args: argparse.Namespace, result: Any) -> int:
    """Say on stderr how publishing ended, when it did not publish every card; its exit status."""
    from mt_eval.cli.termination import said
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.leaderboard.publish import shown_path

    kept = f"the {result.stored} cards stored before it are kept" if result.stored else "nothing was published"
    left = sum(1 for c in result.cards if c.error is None and c.outcome is None)
    again = (f"; {left} card{' was' if left == 1 else 's were'} not tried: run the same command again (the stored "
             "ones are refused as duplicates)")
    if result.interrupted and result.cut_short:  # (the batch being committed may be stored, or not)
        print(said(f"mt-eval publish: interrupted again while a batch was being committed, which was cut short; "
                   f"{kept}, and that batch may or may not be; {left} card{' is' if left == 1 else 's are'} not known "
                   "to be stored: run the same command again (the stored ones are refused as duplicates)"),
              file=sys.stderr)
        return 130
    if result.interrupted:
        print(said(f"mt-eval publish: interrupted; {kept}{again if left else ''}"), file=sys.stderr)
        return 130
    if result.store_error is not None:
        not_stored = (f"; {left} card{' was' if left == 1 else 's were'} not stored: once the store is fixed, run the "
                      "same command again (the stored ones are refused as duplicates)") if left else ""
        print(escaped_for_terminal(f"mt-eval publish: {result.store_error}; {kept}{not_stored}"), file=sys.stderr)
        return 1
    if result.stopped_at is not None:
        print(escaped_for_terminal(f"mt-eval publish: stopped at {shown_path(result.stopped_at.path)} (--fail-fast); "
                                   f"{kept}{again if left else ''}"), file=sys.stderr)
        return 1
    failed = [c for c in result.cards if c.error is not None or c.outcome is None or c.outcome.status != "published"]
    if failed and len(result.cards) > 1 and not args.json:  # (what was said of them may be far above, among many)
        print(escaped_for_terminal(f"mt-eval publish: {_not_published(failed, len(result.cards))}"), file=sys.stderr)
    return 1 if failed else 0


def _not_published(failed: list[Any], given: int, shown: int = 10) -> str:
    """The last line of a publish of many cards that did not all go in: how many did, and which did not."""
    from mt_eval.leaderboard.publish import shown_path

    names = [f"{shown_path(c.path)} ({'refused' if c.outcome is None else c.outcome.status})"
             for c in failed[:shown]]
    more = f" and {len(failed) - shown} more" if len(failed) > shown else ""
    return (f"{given - len(failed)} of {given} cards published; not published (each said above): "
            f"{', '.join(names)}{more}")


def _none_tried(args: argparse.Namespace, why: str) -> None:
    """With --json, every card given as not tried, and ``why`` (stdout holds a report of each card, whatever
    stopped the command; stderr says what went wrong)."""
    if not args.json:
        return
    from mt_eval.cli.json_output import json_text
    from mt_eval.leaderboard.publish import not_tried

    sys.stdout.write(json_text([not_tried(name, why) for name in args.cards]))
