"""The harness commands' arguments: ``mt-eval run``, ``mt-eval compare`` and ``mt-eval verify``.

Only argument parsing lives here (it is imported for every ``mt-eval --help``); the work is imported
when a command runs.

``mt-eval run`` evaluates a method on a corpus and writes a run card.

A run lives in a directory (``--out``): ``run.json`` (what is being run, written first), ``results.jsonl``
(one line per finished entry, appended as they complete) and ``card.json`` (written at the end).
``--resume`` continues an interrupted run with the same method code, corpus and settings.
"""

from __future__ import annotations

import argparse
import os
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))), "examples")
DEMO_METHOD = os.path.join(EXAMPLES, "lexicon-eng-spa")
DEMO_CORPUS = os.path.join(EXAMPLES, "data", "eng-spa-demo.json")


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.description = ("Translate a corpus with a method plugin, score it with sacrebleu (chrF++, BLEU, TER with "
                       "95%% bootstrap intervals) and write a run card. Results are saved as they complete; "
                       "an interrupted run continues with --resume.")
    run.formatter_class = argparse.RawDescriptionHelpFormatter
    run.epilog = ("examples:\n  mt-eval run --demo\n"
                  "  mt-eval run --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json\n"
                  "  mt-eval run --method my-method --corpus dev.jsonl --pair eng>spa --out runs/try1 --resume\n"
                  "  mt-eval run --champollion-config app/champollion.config.json --pair en:es --corpus dev.json")
    what = run.add_argument_group("what to run")
    what.add_argument("--method", metavar="DIR", help="method plugin directory")
    what.add_argument("--corpus", metavar="FILE", help="corpus: upstream JSON, JSON list, .jsonl or .tsv")
    what.add_argument("--method-card", metavar="CARD", help="method card to use instead of the plugin's")
    what.add_argument("--pair", metavar="SRC>TGT", help="language pair (default: the corpus's, else the "
                                                        "method's first supported pair); with "
                                                        "--champollion-config, the config's pair, e.g. en:es")
    what.add_argument("--champollion-config", metavar="PATH",
                      help="evaluate the method plugin a champollion.config.json names for --pair (its model, "
                           "temperature and batchSize apply; the run card records the config and pair)")
    what.add_argument("--demo", action="store_true", help="run the bundled example method on the bundled corpus")
    what.add_argument("--limit", type=int, metavar="N", help="only the first N entries")
    what.add_argument("--isolate", action="store_true", help="run a Python method in its own process")
    where = run.add_argument_group("where results go")
    where.add_argument("--out", metavar="DIR", help="run directory (default: runs/METHOD__CORPUS)")
    where.add_argument("--resume", action="store_true", help="continue the interrupted run in --out")
    where.add_argument("--force", action="store_true", help="start over even if --out holds results")
    how = add_budget_arguments(run)
    how.add_argument("--resamples", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    how.add_argument("--seed", type=int, default=12345, help="bootstrap seed, also passed to the method")
    add_method_config_arguments(run)
    add_latency_arguments(run)
    held = run.add_argument_group("what the run is held to")
    held.add_argument("--policy", metavar="FILE", help="headline gate policy (default: the shipped one; mt-eval gate "
                                                        "--help lists its thresholds)")
    held.add_argument("--freeze", metavar="FILE", help="refuse to run unless everything matches this frozen manifest "
                                                        "(mt-eval freeze init writes one)")
    run.add_argument("--extension", action="append", default=[], metavar="MODULE",
                     help="enable an extension module implementing mt-eval hooks (repeatable)")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.set_defaults(print_run_help=run.print_help)


def add_method_config_arguments(parser: argparse.ArgumentParser) -> None:
    """What the method is given in its RunConfig besides the pair (``run`` and ``freeze init``)."""
    model = parser.add_argument_group("passed to the method (RunConfig)")
    model.add_argument("--model", help="model name")
    model.add_argument("--base-url", help="OpenAI-compatible endpoint")
    model.add_argument("--temperature", type=float)
    model.add_argument("--max-tokens", type=int)
    model.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="method parameter (repeatable); VALUE is parsed as JSON when it can be")


def add_budget_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Batch size, concurrency, timeout, retries and retry budget (``run`` and ``freeze init``)."""
    how = parser.add_argument_group("how to run")
    how.add_argument("--batch-size", type=int, default=8, metavar="N", help="entries per call (default 8)")
    how.add_argument("--concurrency", type=int, default=8, metavar="N", help="calls in flight (default 8)")
    how.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per entry (default 120)")
    how.add_argument("--retries", type=int, default=1, metavar="N", help="retries per failed entry (default 1)")
    how.add_argument("--retry-budget", type=int, metavar="N", help="retries for the whole run "
                                                                   "(default: 10%% of entries, at least 10)")
    return how


def add_latency_arguments(parser: argparse.ArgumentParser) -> None:
    """How the harness measures latency (``run`` and ``freeze init``; mt_eval.harness.latency)."""
    from mt_eval.harness.latency import DEFAULT_REPETITIONS, DEFAULT_SAMPLE, DEFAULT_WARMUP

    latency = parser.add_argument_group(
        "latency (measured by the harness in extra one-entry calls before the scored run; never scored)")
    latency.add_argument("--latency-warmup", type=int, default=DEFAULT_WARMUP, metavar="N",
                         help=f"untimed warm-up calls after the cold call (default {DEFAULT_WARMUP})")
    latency.add_argument("--latency-sample", type=int, default=DEFAULT_SAMPLE, metavar="N",
                         help=f"scored entries timed one call each at concurrency 1 (default {DEFAULT_SAMPLE}; 0: "
                              "no latency calls at all, no latency figures)")
    latency.add_argument("--latency-repetitions", type=int, default=DEFAULT_REPETITIONS, metavar="N",
                         help=f"times the sample is timed (default {DEFAULT_REPETITIONS})")


def run_command(args: argparse.Namespace) -> int:
    if args.demo:
        args.method = args.method or DEMO_METHOD
        args.corpus = args.corpus or DEMO_CORPUS
    if args.champollion_config:
        from mt_eval.champollion.evaluate import apply_champollion_config

        try:
            apply_champollion_config(args)
        except (ValueError, LookupError, OSError) as exc:
            print(f"mt-eval run: {exc}", file=sys.stderr)
            return 1
    if not args.method or not args.corpus:
        args.print_run_help()
        return 2
    from mt_eval.harness.run_rules import EXIT_GATE_FAILED, RulesError
    from mt_eval.harness.session import RunError, run_evaluation
    from mt_eval.problems import ProblemsError

    try:
        card_path, headline = run_evaluation(args)
    except (RunError, RulesError, ProblemsError, ValueError) as exc:
        print(f"mt-eval run: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nmt-eval run: interrupted; finished entries are saved. Continue with the same command and "
              "--resume.", file=sys.stderr)
        return 130
    print(f"run card: {card_path}")
    return 0 if headline else EXIT_GATE_FAILED


def add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.description = ("Compare two runs on the same corpus with sacrebleu's paired bootstrap resampling and "
                           "paired approximate randomization. A is the baseline.")
    compare.add_argument("baseline", metavar="A.json", help="run card of the baseline")
    compare.add_argument("candidate", metavar="B.json", help="run card of the system compared with it")
    compare.add_argument("--corpus", metavar="FILE", help="the corpus (default: the path both cards record)")
    compare.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (1000)")
    compare.add_argument("--trials", type=int, default=10000, metavar="N", help="randomization trials (10000)")
    compare.add_argument("--seed", type=int, default=12345, help="seed for both tests")
    compare.add_argument("--allow-diff", action="append", default=[], metavar="NAME",
                         help="accept that this covariate differs between the cards (repeatable): model, "
                              "temperature, tool_permissions, environment, retry_budget, max_tokens, seed, batch_size, "
                              "concurrency, timeout_s, retries_per_entry; hardware compares latencies across "
                              "hardware labels")
    compare.add_argument("--json", action="store_true", help="print JSON")
    compare.add_argument("--extension", action="append", default=[], metavar="MODULE",
                         help="enable an extension whose metrics the cards carry, to verify them (repeatable)")


def compare_command(args: argparse.Namespace) -> int:
    from mt_eval.harness.compare import run_compare

    return run_compare(args)


def add_verify_arguments(verify: argparse.ArgumentParser) -> None:
    verify.description = ("Re-verify run cards: the card's version and content_sha256, its schema and tallies, the "
                          "corpus file's sha256, and every metric recomputed from the card's predictions and the "
                          "corpus's references (the card's own resamples and seed). Each mismatch is reported "
                          "with its JSON path. Exit status 0 when every card verifies, 1 otherwise.")
    verify.formatter_class = argparse.RawDescriptionHelpFormatter
    verify.epilog = ("examples (after nox -s demo, or mt-eval run --demo --out runs/demo):\n"
                     "  mt-eval verify runs/demo/card.json\n"
                     "  mt-eval verify runs/demo/card.json --corpus examples/data/eng-spa-demo.json\n"
                     "  mt-eval verify runs/*/card.json --json")
    verify.add_argument("cards", nargs="+", metavar="CARD", help="run card(s) (card.json in a run directory)")
    verify.add_argument("--corpus", metavar="FILE", help="the corpus the card was run on (default: the path the "
                                                         "card records, as written or beside the card)")
    verify.add_argument("--extension", action="append", default=[], metavar="MODULE",
                        help="enable an extension so that the metrics it registers are recomputed too (repeatable)")
    verify.add_argument("--json", action="store_true", help="print a JSON report")
    verify.add_argument("--quiet", action="store_true", help="print only the cards that do not verify")


def verify_command(args: argparse.Namespace) -> int:
    import json

    from mt_eval.harness.verify import as_json, render, verify_card

    reports = [verify_card(card, corpus=args.corpus, extensions=args.extension) for card in args.cards]
    if args.json:
        print(json.dumps([as_json(r) for r in reports], indent=2, ensure_ascii=False))
    else:
        for report in reports:
            if not (args.quiet and report.ok):
                print(render(report))
    return 0 if all(r.ok for r in reports) else 1
