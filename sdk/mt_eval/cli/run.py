"""``mt-eval run``: evaluate a method on a corpus and write a run card.

A run lives in a directory (``--out``): ``run.json`` (what is being run, written first), ``results.jsonl``
(one line per finished entry, appended as they complete) and ``card.json`` (written at the end).
``--resume`` continues an interrupted run with the same method code, corpus and settings. One process at a
time uses a run directory; the exit statuses are listed in `mt_eval.harness.outcome`.

The arguments become one `mt_eval.harness.request.RunRequest`, the only thing the harness is given.
"""

from __future__ import annotations

import argparse
import sys

from mt_eval.cli.arguments import (
    add_call_arguments,
    add_corpus_arguments,
    add_model_arguments,
    add_retry_arguments,
    add_run_directory_arguments,
    add_seed_argument,
    add_start_timeout_argument,
    positive_int,
)
from mt_eval.cli.measurement_arguments import add_latency_arguments, add_scoring_arguments
from mt_eval.cli.usage_errors import named_path, named_plugin

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.harness.outcome import MaxErrors
    from mt_eval.harness.request import RunRequest
    from mt_eval.harness.run_rules import RunFinished

SAVED = "\nmt-eval run: interrupted; finished entries are saved."
INTERRUPTED = f"{SAVED} Continue with the same command and --resume."
EXPECTED = (ValueError, OSError)  # unreadable files, bad values: the message says which
CWD_GONE = ("the current directory no longer exists (it was removed after the shell entered it): cd to a directory "
            "that exists, and run the command again")
SHOWS_GUEST_OUTPUT = True  # what a method in a bridge guest writes to stderr is shown (cli/guest_output.py)


def add_arguments(run: argparse.ArgumentParser) -> None:
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
                  "130 interrupted\n  (Ctrl-C), 143 stopped by SIGTERM and 129 by SIGHUP (as by Ctrl-C)")
    what = run.add_argument_group("what to run")
    named = what.add_mutually_exclusive_group()  # (a champollion config names the method)
    named.add_argument("--method", type=named_plugin, metavar="DIR", help="method plugin directory")
    what.add_argument("--method-card", metavar="CARD", help="method card to use instead of the plugin's",
                      type=named_path)
    what.add_argument("--pair", metavar="'SRC>TGT'",
                      help="language pair, quoted ('eng>spa') or as eng:spa or eng-spa (default: the corpus's, else "
                           "the method's first supported pair; a --pair the corpus's pair contradicts needs "
                           "--accept-doubt pair-mismatch); with --champollion-config, the config's pair, e.g. en:es")
    named.add_argument("--champollion-config", type=named_path, metavar="PATH",
                       help="evaluate the method plugin a champollion.config.json names for --pair (its model, "
                            "temperature, batchSize and timeoutS apply, over --model, --temperature, --batch-size "
                            "and --timeout; the run card records the config and pair; not with --method or --demo)")
    what.add_argument("--demo", action="store_true", help="run the bundled example method on the bundled corpus")
    what.add_argument("--isolate", action="store_true", help="run a Python method in its own process")
    add_corpus_arguments(run)
    add_run_directory_arguments(run.add_argument_group("where results go"), "runs/METHOD__CORPUS")
    how = run.add_argument_group("how to run")
    add_call_arguments(how, "entry", "entries")
    add_start_timeout_argument(how, note="; the card does not record it, as it changes no result")
    add_retry_arguments(how)
    how.add_argument("--max-errors", type=max_errors, default="0", metavar="N|P%",
                     help="failed entries tolerated for exit status 0: a count (5) or a share of the entries run "
                          "(2%%); default 0 (a negative control's refusal is not a failure)")
    add_scoring_arguments(how)
    add_seed_argument(how)
    how.add_argument("--embed-results", choices=("auto", "always", "never"), default="auto",
                     help="whether the card lists every result or references results.jsonl by its SHA-256 (verify, "
                          "compare and grade read it next to the card); auto: listed up to 100,000 results")
    add_model_arguments(run.add_argument_group("passed to the method (RunConfig)"))
    fair = run.add_argument_group("fair by construction (see the README)")
    fair.add_argument("--sandbox", action="store_true",
                      help="run the method as a bridge guest in the sandbox (bubblewrap): no network but what its "
                           "class allows, its plugin read-only, a private /tmp; fails if this host cannot isolate")
    fair.add_argument("--official", action="store_true",
                      help="a run meant for publishing: always sandboxed, refused if the static scan finds an "
                           "undeclared dependency; an A1 method needs --gateway-policy with a second model")
    fair.add_argument("--sandbox-ro", type=named_path, action="append", default=[], metavar="PATH",
                      help="also expose PATH read-only in the sandbox, e.g. a mirrored artifact (repeatable; "
                           "recorded in the card; with --sandbox or --official)")
    fair.add_argument("--gateway-policy", metavar="FILE", type=named_path,
                      help="serve the LLM gateway for this run with this policy (allowlisted pinned models, token "
                           "budget); the method gets its URL as base_url and --model must be allowlisted")
    fair.add_argument("--substitution-sample", type=positive_int, metavar="N",
                      help="entries an A1 run replays with the policy's second model (default 5; with "
                           "--gateway-policy)")
    fair.add_argument("--contamination-check", action=argparse.BooleanOptionalAction, default=True,
                      help="check the method's bundle for the corpus's texts before translating and record the "
                           "result in the run card (default: on; --no-contamination-check records not-run)")
    add_latency_arguments(run)
    held = run.add_argument_group("what the run is held to")
    held.add_argument("--policy", metavar="FILE", help="headline gate policy (default: the shipped one; mt-eval gate "
                                                        "--help lists its thresholds)", type=named_path)
    held.add_argument("--freeze", metavar="FILE", help="refuse to run unless everything matches this frozen manifest "
                                                        "(mt-eval freeze init writes one)", type=named_path)
    run.add_argument("--extension", action="append", default=[], metavar="MODULE",
                     help="enable an extension module implementing mt-eval hooks (repeatable)")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.set_defaults(print_run_usage=run.print_usage)


def max_errors(text: str) -> MaxErrors:
    """An argparse type: ``--max-errors`` as a count (5) or a share (2.5%), refused as a usage error (exit 2)."""
    from mt_eval.harness.outcome import MaxErrors

    try:
        return MaxErrors.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from mt_eval.cli import said_on_stderr
    from mt_eval.pairs import PairError

    try:
        request = run_request(args)
    except PairError as exc:  # --pair in no spelling mt_eval.pairs reads
        args.print_run_usage(sys.stderr)
        said_on_stderr(f"mt-eval run: error: argument --pair: {exc}")
        return 2
    if request is None:
        missing = [what for what, given in (
            ("--method DIR (a method plugin directory)", args.method or args.demo or args.champollion_config),
            ("--corpus FILE (or --source-file SRC --reference-file REF)", args.corpus or args.source_file
             or args.reference_file or args.demo)) if not given]
        args.print_run_usage(sys.stderr)
        print(f"mt-eval run: give {' and '.join(missing)}; or try the bundled example with --demo. `mt-eval run "
              "--help` lists every option, with examples.", file=sys.stderr)
        return 2
    import os

    from mt_eval.errors import ExpectedError
    from mt_eval.harness.run_rules import RunFinished
    from mt_eval.harness.session import run_evaluation

    try:
        os.getcwd()  # (the summary names the run's files from it: had it been removed, the run failed once done)
    except FileNotFoundError:
        raise ExpectedError(CWD_GONE) from None
    try:
        return run_evaluation(request).exit_code
    except RunFinished as finished:
        return said_finished("mt-eval run", finished)
    except KeyboardInterrupt as interrupted:
        if "--force" not in request.command or getattr(interrupted, "message", None):
            raise
        from mt_eval.errors import InterruptedBefore  # (a message of its own: "the same command" would start over)

        again = request.command_line(drop=("--force",), add=("--resume",))
        raise InterruptedBefore(f"{SAVED} Continue with --resume in place of --force: {again}") from interrupted


def said_finished(prog: str, finished: RunFinished) -> int:
    """Say in one line, on standard output, that a ``--resume`` found its run complete already (``run`` and
    ``decide run``); its exit status."""
    from mt_eval.control_chars import escaped_for_terminal

    print(escaped_for_terminal(f"{prog}: {finished}"))  # (a path's control characters escaped)
    return finished.exit_code


def run_request(args: argparse.Namespace) -> RunRequest | None:
    """The run the arguments ask for; None when they name no method or no corpus (a usage error). A ``--pair``
    in no spelling `mt_eval.pairs` reads raises `mt_eval.pairs.PairError`."""
    from pathlib import Path

    from mt_eval.cli.arguments import corpus_spec, selection_request
    from mt_eval.cli.method_params import method_params
    from mt_eval.harness.execution import RunSettings
    from mt_eval.harness.latency import LatencyPlan
    from mt_eval.harness.request import Fairness, MethodSettings, RunDirectory, RunRequest

    refuse_options_apart(args)
    method, corpus, pair = args.method, args.corpus, args.pair
    model, temperature, batch_size, timeout_s = args.model, args.temperature, args.batch_size, args.timeout
    if args.demo:
        from mt_eval.resources import demo_corpus, demo_method

        if not method and not demo_method().is_dir():
            from mt_eval.errors import UsageError

            raise UsageError(f"--demo runs the bundled example method, which this installation is missing "
                             f"({demo_method()}): reinstall mt-eval-sdk, or give --method DIR and --corpus FILE")
        method = method or str(demo_method())
        parallel = args.source_file is not None or args.reference_file is not None
        corpus = corpus or (None if parallel else str(demo_corpus()))  # (the demo method on the text given)
    selected = None
    if args.champollion_config:
        from mt_eval.champollion.evaluate import champollion_selection

        selected = champollion_selection(args.champollion_config, pair)
        method, pair, batch_size = str(selected.method), selected.languages, selected.batch_size
        model = selected.model if selected.model is not None else model
        temperature = selected.temperature if selected.temperature is not None else temperature
        timeout_s = selected.timeout_s if selected.timeout_s is not None else timeout_s
    elif pair is not None:  # with --champollion-config, --pair names one of the config's pairs, as written there
        from mt_eval.pairs import parse_pair

        pair = parse_pair(pair)
    spec = corpus_spec(args, corpus)
    if not method or spec is None:
        return None
    return RunRequest(
        method=Path(method), corpus=spec, selection=selection_request(args),
        method_card=Path(args.method_card) if args.method_card else None, pair=pair, champollion=selected,
        settings=MethodSettings(model=model, base_url=args.base_url, temperature=temperature,
                                max_tokens=args.max_tokens, params=method_params(args.param)),
        seed=args.seed,
        calls=RunSettings(batch_size=batch_size, concurrency=args.concurrency, timeout_s=timeout_s,
                          retries=args.retries, retry_budget=args.retry_budget),
        max_errors=args.max_errors, resamples=args.resamples, bootstrap=args.bootstrap,
        embed_results=args.embed_results, isolate=args.isolate,
        fairness=Fairness(sandbox=args.sandbox, official=args.official, sandbox_ro=tuple(args.sandbox_ro),
                          gateway_policy=Path(args.gateway_policy) if args.gateway_policy else None,
                          substitution_sample=args.substitution_sample or 5,
                          contamination_check=args.contamination_check),
        latency=LatencyPlan(warmup=args.latency_warmup, sample=args.latency_sample,
                            repetitions=args.latency_repetitions),
        policy=Path(args.policy) if args.policy else None, freeze=Path(args.freeze) if args.freeze else None,
        extensions=tuple(args.extension),
        directory=RunDirectory(out=Path(args.out) if args.out else None, resume=args.resume, force=args.force,
                               wait_s=args.wait),
        quiet=args.quiet, command=command_words())


def refuse_options_apart(args: argparse.Namespace) -> None:
    """`OptionError` for options that cannot go together, or one that would do nothing, before any work."""
    from mt_eval.cli.usage_errors import OptionError

    if args.champollion_config and args.demo:
        raise OptionError("--champollion-config", "not allowed with argument --demo: the config names the method "
                          "(give the corpus with --corpus FILE)")
    if args.sandbox_ro and not (args.sandbox or args.official):
        raise OptionError("--sandbox-ro", f"exposes {args.sandbox_ro[0]} in the sandbox, and this run has none: add "
                          "--sandbox (or --official, always sandboxed), or leave --sandbox-ro out")
    if args.substitution_sample is not None and not args.gateway_policy:
        raise OptionError("--substitution-sample", "sets how many entries are replayed with the gateway policy's "
                          "second model, and this run has no --gateway-policy: add one, or leave it out")
    if args.gateway_policy and args.base_url:
        raise OptionError("--gateway-policy", "not allowed with argument --base-url: with a gateway the method "
                          "reaches its model at the URL the run gives it; leave --base-url out")


def command_words(command: tuple[str, ...] = ("run",)) -> tuple[str, ...]:
    """The words after ``mt-eval`` that started this ``command`` (``run``, ``decide run``): they alone when it was
    started from Python."""
    words = sys.argv[1:] if sys.argv and sys.argv[0].endswith(("mt-eval", "__main__.py")) else []
    return tuple(words) if tuple(words[:len(command)]) == command else command
