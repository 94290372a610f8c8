"""The harness commands' arguments: ``mt-eval run``, ``mt-eval compare`` and ``mt-eval verify``.

Only argument parsing lives here (it is imported for every ``mt-eval --help``); the work is imported
when a command runs.

``mt-eval run`` evaluates a method on a corpus and writes a run card.

A run lives in a directory (``--out``): ``run.json`` (what is being run, written first), ``results.jsonl``
(one line per finished entry, appended as they complete) and ``card.json`` (written at the end).
``--resume`` continues an interrupted run with the same method code, corpus and settings. One process at a
time uses a run directory; the exit statuses are listed in `mt_eval.harness.outcome`.
"""

from __future__ import annotations

import argparse
import os
import sys

from mt_eval.corpus.arguments import add_corpus_arguments
from mt_eval.pairs import PairError, parse_pair

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))), "examples")
DEMO_METHOD = os.path.join(EXAMPLES, "lexicon-eng-spa")
DEMO_CORPUS = os.path.join(EXAMPLES, "data", "eng-spa-demo.json")


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    run.description = ("Translate a corpus with a method plugin, score it with sacrebleu (chrF++, BLEU, TER with "
                       "95% bootstrap intervals) and write a run card. Results are saved as they complete; "
                       "an interrupted run continues with --resume.")
    run.formatter_class = argparse.RawDescriptionHelpFormatter
    run.epilog = ("examples:\n  mt-eval run --demo\n"
                  "  mt-eval run --method examples/rules-eng-spa --corpus examples/data/eng-spa-demo.json\n"
                  "  mt-eval run --method my-method --corpus dev.jsonl --pair 'eng>spa' --out runs/try1 --resume\n"
                  "  mt-eval run --method my-method --corpus dev.tsv --ids 1..50 --out runs/first50\n"
                  "  mt-eval run --method my-method --source-file devtest.eng_Latn --reference-file devtest.spa_Latn "
                  "--pair 'eng>spa'\n"
                  "  mt-eval run --champollion-config app/champollion.config.json --pair en:es --corpus dev.json\n"
                  "  mt-eval run --demo --sandbox --out runs/demo-sandboxed --force\n"
                  "  mt-eval run --method examples/coached-llm-eng-spa --corpus examples/data/eng-spa-demo.json "
                  "--official --gateway-policy examples/coached-llm-eng-spa/gateway-policy.json\n"
                  "  mt-eval run --demo --out runs/demo --force --max-errors 2%\n"
                  "  mt-eval run --demo --policy examples/policies/no-abstention.json --latency-sample 20 "
                  "--out runs/demo --force\n"
                  "\nexit status: 0 complete (failures within --max-errors) and the headline passed the gate, 1 the "
                  "run could not\n  start or continue, 2 usage, 3 partial (more failed entries than --max-errors), "
                  "4 failed (no entry\n  translated, no scores), 5 complete but the gate withheld the headline "
                  "(mt-eval gate CARD says why),\n  75 the run directory is in use by another process (see --wait), "
                  "130 interrupted")
    what = run.add_argument_group("what to run")
    what.add_argument("--method", metavar="DIR", help="method plugin directory")
    what.add_argument("--method-card", metavar="CARD", help="method card to use instead of the plugin's")
    what.add_argument("--pair", metavar="'SRC>TGT'",
                      help="language pair, quoted ('eng>spa') or as eng:spa or eng-spa (default: the corpus's, else "
                           "the method's first supported pair; a --pair the corpus's pair contradicts needs "
                           "--accept-doubt pair-mismatch); with --champollion-config, the config's pair, e.g. en:es")
    what.add_argument("--champollion-config", metavar="PATH",
                      help="evaluate the method plugin a champollion.config.json names for --pair (its model, "
                           "temperature and batchSize apply; the run card records the config and pair)")
    what.add_argument("--demo", action="store_true", help="run the bundled example method on the bundled corpus")
    what.add_argument("--isolate", action="store_true", help="run a Python method in its own process")
    add_corpus_arguments(run)
    add_run_directory_arguments(run.add_argument_group("where results go"), "runs/METHOD__CORPUS")
    how = run.add_argument_group("how to run")
    add_call_arguments(how, "entry", "entries")
    add_retry_arguments(how)
    how.add_argument("--max-errors", default="0", metavar="N|P%",
                     help="failed entries tolerated for exit status 0: a count (5) or a share of the corpus (2%%); "
                          "default 0 (a negative control's refusal is not a failure)")
    how.add_argument("--resamples", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    how.add_argument("--seed", type=int, default=12345, help="bootstrap seed, also passed to the method")
    how.add_argument("--bootstrap", choices=("fast", "upstream"), default="fast",
                     help="how resamples are drawn: fast (default), or upstream, the upstream harness's draws "
                          "exactly (its intervals, for comparing with cards it produced; slower)")
    how.add_argument("--embed-results", choices=("auto", "always", "never"), default="auto",
                     help="whether the card lists every result or references results.jsonl by its SHA-256 (verify "
                          "and compare read it next to the card); auto: listed up to 100,000 results")
    add_model_arguments(run.add_argument_group("passed to the method (RunConfig)"))
    fair = run.add_argument_group("fair by construction (see the README)")
    fair.add_argument("--sandbox", action="store_true",
                      help="run the method as a bridge guest in the sandbox (bubblewrap): no network but what its "
                           "class allows, its plugin read-only, a private /tmp; fails if this host cannot isolate")
    fair.add_argument("--official", action="store_true",
                      help="a run meant for publishing: always sandboxed, refused if the static scan finds an "
                           "undeclared dependency; an A1 method needs --gateway-policy with a second model")
    fair.add_argument("--sandbox-ro", action="append", default=[], metavar="PATH",
                      help="also expose PATH read-only in the sandbox, e.g. a mirrored artifact (repeatable; "
                           "recorded in the card)")
    fair.add_argument("--gateway-policy", metavar="FILE",
                      help="serve the LLM gateway for this run with this policy (allowlisted pinned models, token "
                           "budget); the method gets its URL as base_url and --model must be allowlisted")
    fair.add_argument("--substitution-sample", type=int, default=5, metavar="N",
                      help="entries an A1 run replays with the policy's second model (default 5)")
    fair.add_argument("--contamination-check", action=argparse.BooleanOptionalAction, default=True,
                      help="check the method's bundle for the corpus's texts before translating and record the "
                           "result in the run card (default: on; --no-contamination-check records not-run)")
    add_latency_arguments(run)
    held = run.add_argument_group("what the run is held to")
    held.add_argument("--policy", metavar="FILE", help="headline gate policy (default: the shipped one; mt-eval gate "
                                                        "--help lists its thresholds)")
    held.add_argument("--freeze", metavar="FILE", help="refuse to run unless everything matches this frozen manifest "
                                                        "(mt-eval freeze init writes one)")
    run.add_argument("--extension", action="append", default=[], metavar="MODULE",
                     help="enable an extension module implementing mt-eval hooks (repeatable)")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.set_defaults(print_run_usage=run.print_usage)


def add_run_directory_arguments(group: argparse._ArgumentGroup, default: str) -> None:
    """--out, --resume, --force and --wait (see `mt_eval.harness.run_directory`)."""
    group.add_argument("--out", metavar="DIR", help=f"run directory (default: {default})")
    group.add_argument("--resume", action="store_true", help="continue the interrupted run in --out")
    group.add_argument("--force", action="store_true", help="start over even if --out holds results")
    group.add_argument("--wait", nargs="?", type=float, const=float("inf"), metavar="SECONDS",
                       help="when another process is using --out, wait for it (at most SECONDS) instead of "
                            "refusing at once")


def add_call_arguments(group: argparse._ArgumentGroup, item: str, items: str) -> None:
    """How a method is called: --batch-size ``items`` per call, --concurrency calls, --timeout per ``item``."""
    group.add_argument("--batch-size", type=positive_int, default=8, metavar="N", help=f"{items} per call (default 8)")
    group.add_argument("--concurrency", type=positive_int, default=8, metavar="N", help="calls in flight (default 8)")
    group.add_argument("--timeout", type=positive_float, default=120.0, metavar="S",
                       help=f"seconds per {item} (default 120)")


def add_retry_arguments(group: argparse._ArgumentGroup) -> None:
    """--retries per failed entry within a run-wide --retry-budget (``run`` and ``freeze init``)."""
    group.add_argument("--retries", type=int, default=1, metavar="N", help="retries per failed entry (default 1)")
    group.add_argument("--retry-budget", type=int, metavar="N", help="retries for the whole run "
                                                                     "(default: 10%% of entries, at least 10)")


def add_latency_arguments(parser: argparse.ArgumentParser) -> None:
    """How the harness measures latency (``run`` and ``freeze init``; `mt_eval.harness.latency`)."""
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


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def add_model_arguments(group: argparse._ArgumentGroup) -> None:
    """The options a method receives in its config: model settings and --param (also for decide and grade)."""
    group.add_argument("--model", help="model name")
    group.add_argument("--base-url", help="OpenAI-compatible (or decision-engine) endpoint")
    group.add_argument("--temperature", type=float)
    group.add_argument("--max-tokens", type=int)
    group.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="method parameter (repeatable); VALUE is parsed as JSON when it can be")


def method_params(items: list[str]) -> dict[str, object]:
    """``--param KEY=VALUE`` options → config.params; a VALUE that parses as JSON is that JSON value."""
    import json

    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param {item!r}: write it as KEY=VALUE")
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    return params


def run_command(args: argparse.Namespace) -> int:
    if args.demo:
        if not os.path.isdir(DEMO_METHOD) and not args.method:
            print("mt-eval run: --demo runs the example method of the mt-eval repository (examples/lexicon-eng-spa), "
                  "which this installation does not have: run it from a checkout of the repository, or give "
                  "--method DIR and --corpus FILE", file=sys.stderr)
            return 2
        args.method = args.method or DEMO_METHOD
        args.corpus = args.corpus or DEMO_CORPUS
    if args.champollion_config:  # --pair names one of the config's pairs, as written there (en:es)
        from mt_eval.champollion.evaluate import apply_champollion_config

        try:
            apply_champollion_config(args)
        except (ValueError, LookupError, OSError) as exc:
            print(f"mt-eval run: {exc}", file=sys.stderr)
            return 1
    elif args.pair is not None:
        try:
            args.pair = parse_pair(args.pair)
        except PairError as exc:
            args.print_run_usage(sys.stderr)
            print(f"mt-eval run: error: argument --pair: {exc}", file=sys.stderr)
            return 2
    missing = [what for what, given in (
        ("--method DIR (a method plugin directory)", args.method),
        ("--corpus FILE (or --source-file SRC --reference-file REF)", args.corpus or args.source_file
         or args.reference_file)) if not given]
    if missing:
        args.print_run_usage(sys.stderr)
        print(f"mt-eval run: give {' and '.join(missing)}; or try the bundled example with --demo. `mt-eval run "
              "--help` lists every option, with examples.", file=sys.stderr)
        return 2
    from mt_eval.harness.outcome import EXIT_BUSY, EXIT_ERROR, EXIT_INTERRUPTED
    from mt_eval.harness.run_directory import RunError
    from mt_eval.harness.run_rules import RulesError
    from mt_eval.harness.session import run_evaluation
    from mt_eval.locks import Busy
    from mt_eval.problems import ProblemsError

    try:
        report = run_evaluation(args)
    except Busy as exc:
        print(f"mt-eval run: {exc}. Wait for it to finish (or stop it), or give --wait to wait; a run directory "
              "is used by one process at a time", file=sys.stderr)
        return EXIT_BUSY
    except (RunError, RulesError, ProblemsError, ValueError, OSError) as exc:
        print(f"mt-eval run: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("\nmt-eval run: interrupted; finished entries are saved. Continue with the same command and "
              "--resume.", file=sys.stderr)
        return EXIT_INTERRUPTED
    return report.exit_code


def add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.description = ("Compare two runs on the same corpus with sacrebleu's paired bootstrap resampling and "
                           "paired approximate randomization. A is the baseline.")
    compare.formatter_class = argparse.RawDescriptionHelpFormatter
    compare.epilog = ("examples (after nox -s demo, which writes runs/demo and runs/demo-rules):\n"
                      "  mt-eval compare runs/demo/card.json runs/demo-rules/card.json\n"
                      "  mt-eval compare runs/demo/card.json runs/demo-rules/card.json --json --trials 2000")
    compare.add_argument("baseline", metavar="A.json", help="run card of the baseline")
    compare.add_argument("candidate", metavar="B.json", help="run card of the system compared with it")
    add_corpus_arguments(compare, selection=False, title="the corpus (default: the one both cards record, read "
                                                         "as they record)")
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
    add_corpus_arguments(verify, selection=False, title="the corpus (default: the files the card records, as "
                                                        "written or beside the card, read as it records)")
    verify.add_argument("--extension", action="append", default=[], metavar="MODULE",
                        help="enable an extension so that the metrics it registers are recomputed too (repeatable)")
    verify.add_argument("--json", action="store_true", help="print a JSON report")
    verify.add_argument("--quiet", action="store_true", help="print only the cards that do not verify")


def verify_command(args: argparse.Namespace) -> int:
    import json

    from mt_eval.corpus.arguments import spec_from_args
    from mt_eval.harness.verify import as_json, render, verify_card

    try:
        corpus = spec_from_args(args)
    except ValueError as exc:
        print(f"mt-eval verify: {exc}", file=sys.stderr)
        return 2
    reports = [verify_card(card, corpus=corpus, extensions=args.extension) for card in args.cards]
    if args.json:
        print(json.dumps([as_json(r) for r in reports], indent=2, ensure_ascii=False))
    else:
        for report in reports:
            if not (args.quiet and report.ok):
                print(render(report))
    return 0 if all(r.ok for r in reports) else 1
