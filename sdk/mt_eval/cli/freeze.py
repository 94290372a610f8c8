"""``mt-eval freeze init|validate|show``: write, check and read a freeze manifest (`mt_eval.harness.freeze`)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.cli.usage_errors import named_path, path_operand, plugin_operand

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.harness.request import RunRequest


def prog_of(args: argparse.Namespace) -> str:
    """``mt-eval freeze ACTION``, which begins an error's line."""
    return f"mt-eval freeze {args.freeze_action or 'init'}"


EXPECTED = (ValueError,)
UNSHOWABLE = {"duplicate-key", "not-finite"}  # (`_show`)

DESCRIPTION = """\
Freeze everything a scored run depends on before it runs: the SDK (commit and code SHA-256), the method's
code SHA-256, the corpus SHA-256 with its source and licence, label digests, the pair and model settings,
the budgets, the latency definition and the hardware label. `mt-eval run --freeze FILE` then refuses to run
when anything differs, naming each difference."""
EPILOG = """\
examples:
  mt-eval freeze init --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json --out freeze.json
  mt-eval freeze validate freeze.json
  mt-eval freeze show freeze.json
  mt-eval run --method examples/lexicon-eng-spa --corpus examples/data/eng-spa-demo.json --freeze freeze.json

exit status: init 0 when the manifest is frozen, 1 when it is a draft (it is written, listing what is
missing) or cannot be made; validate 0 when the manifest is valid and frozen, 1 otherwise; show 0, or 1
when the file cannot be read, is not a manifest, or holds a key twice (its files are not read)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mt_eval.cli.arguments import (
        add_call_arguments,
        add_corpus_arguments,
        add_model_arguments,
        add_retry_arguments,
        add_seed_argument,
        pair_argument,
    )
    from mt_eval.cli.measurement_arguments import add_latency_arguments, add_scoring_arguments

    parser.description, parser.epilog = DESCRIPTION, EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    actions = parser.add_subparsers(dest="freeze_action", metavar="ACTION")
    init = actions.add_parser("init", help="write a freeze manifest from the inputs a run would use",
                              description="Write a freeze manifest from the inputs `mt-eval run` would use with the "
                                          "same options. Its status is frozen when every digest is there, else "
                                          "draft (what is missing is listed). The corpus must be a file, not a pipe: "
                                          "validate and run --freeze read it again.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = init.add_argument_group("what to freeze")
    what.add_argument("--method", type=plugin_operand, metavar="DIR", required=True, help="method plugin directory")
    what.add_argument("--pair", type=pair_argument, metavar="'SRC>TGT'",
                      help="language pair, quoted ('eng>spa') or as eng:spa (default: the corpus's, else the "
                           "method's first supported pair)")
    what.add_argument("--corpus-source", metavar="TEXT", help="where the corpus comes from (default: its dataset's "
                                                              "source, url or homepage)")
    what.add_argument("--corpus-license", metavar="SPDX", help="the corpus's licence (default: its dataset's)")
    add_corpus_arguments(init)
    how = init.add_argument_group("how the run will run")
    add_call_arguments(how, "entry", "entries")
    add_retry_arguments(how)
    add_seed_argument(how)
    add_model_arguments(init.add_argument_group("passed to the method (RunConfig)"))
    add_latency_arguments(init)
    scored = init.add_argument_group("how the run will be scored and judged")
    add_scoring_arguments(scored)
    scored.add_argument("--policy", type=named_path, metavar="FILE",
                        help="headline gate policy (default: the shipped one)")
    init.add_argument("--out", type=named_path, metavar="FILE", default="freeze.json",
                      help="where to write it (default freeze.json)")
    init.add_argument("--force", action="store_true", help="replace an existing manifest")
    validate = actions.add_parser("validate", help="check a manifest: every problem at once (fail-closed)",
                                  description="Check a freeze manifest: unknown fields, missing digests of a "
                                              "frozen manifest, and digests that no longer match the method's "
                                              "files or the corpus, all at once.",
                                  epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    validate.add_argument("manifest", type=path_operand, metavar="FILE")
    validate.add_argument("--json", action="store_true", help="print a JSON report")
    show = actions.add_parser("show", help="print a manifest and the run command it holds",
                              description="Print a freeze manifest and the `mt-eval run` command that matches it.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("manifest", type=path_operand, metavar="FILE")
    parser.set_defaults(print_freeze_help=parser.print_help)


def run(args: argparse.Namespace) -> int:
    action = args.freeze_action
    if action == "init":
        return _init(args)
    if action == "validate":
        return _validate(Path(args.manifest), as_json=args.json)
    if action == "show":
        return _show(Path(args.manifest))
    args.print_freeze_help()
    return 2


def _init(args: argparse.Namespace) -> int:
    from mt_eval.atomic_files import write_atomically
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.errors import ExpectedError
    from mt_eval.harness.freeze import build_manifest, missing_digests
    from mt_eval.harness.run_config import run_inputs
    from mt_eval.harness.run_directory import writable_file

    request = _run_request(args)  # (options that cannot go together are refused before --out is looked at)
    out = Path(args.out)
    writable_file(out, "freeze.json")
    if out.exists() and not args.force:
        raise ExpectedError(f"{out} exists: give --force to replace it, or another --out")
    inputs = run_inputs(request)
    _refuse_out_among_inputs(out, inputs["method_dir"], [Path(f.path) for f in inputs["corpus"].files])
    _refuse_files_read_once(inputs["corpus"].files)
    manifest = build_manifest(**inputs, created_at=datetime.datetime.now(datetime.UTC).isoformat(
        timespec="seconds"), relative_to=out.parent, corpus_source=args.corpus_source,
                              corpus_license=args.corpus_license)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n")  # (whole or none)
    except OSError as exc:
        raise ExpectedError(f"cannot write --out {out}: {exc.strerror or exc}") from None
    print(f"wrote {escaped_for_terminal(str(out), one_line=True)}: status {manifest.status}")  # (its path escaped)
    missing = missing_digests(manifest)
    for where, hint in missing:
        print(escaped_for_terminal(f"  missing {where}: {hint}"))
    return 0 if manifest.status == "frozen" else 1


def _refuse_files_read_once(corpus_files: list[Any]) -> None:
    """A corpus given as a pipe or standard input cannot be frozen: freeze validate and run --freeze hash the file
    the manifest records again, and a pipe's bytes are gone once read (a file redirected to standard input is
    recorded as that file)."""
    from mt_eval.corpus.files import stream_name
    from mt_eval.errors import ExpectedError

    for corpus_file in corpus_files:
        path = Path(corpus_file.path)
        if (streamed := stream_name(path)) is not None and not path.resolve().is_file():
            option = {"source": "--source-file", "reference": "--reference-file"}.get(corpus_file.role, "--corpus")
            raise ExpectedError(f"{option} reads {streamed}, a pipe: a freeze manifest records the corpus's file, "
                                "which freeze validate and run --freeze read again, and a pipe's bytes are gone once "
                                "read: write it to a file (e.g. zcat dev.jsonl.gz > dev.jsonl) and freeze that")


def _refuse_out_among_inputs(out: Path, method_dir: Path, corpus_files: list[Path]) -> None:
    """--out may not be one of the files it freezes: the corpus (or its reference file), or a file in the method's
    folder, whose files the manifest hashes (written there, it would change the hash it records)."""
    from mt_eval.errors import ExpectedError

    where = out.resolve()
    for corpus_file in corpus_files:
        if where == corpus_file.resolve():
            raise ExpectedError(f"--out {out} is the corpus file the manifest freezes: name another file")
    if where.is_relative_to(method_dir.resolve()):
        raise ExpectedError(f"--out {out} is inside the method's folder {method_dir}, whose files the manifest "
                            f"hashes (a manifest there would change them): write it beside the folder, e.g. --out "
                            f"{method_dir.parent / 'freeze.json'}")


def _run_request(args: argparse.Namespace) -> RunRequest:
    """The run ``mt-eval run`` would make with these options (what the manifest freezes)."""
    from mt_eval.cli.arguments import corpus_spec, selection_request
    from mt_eval.cli.method_params import method_params
    from mt_eval.cli.usage_errors import OptionError
    from mt_eval.harness.execution import RunSettings
    from mt_eval.harness.latency import LatencyPlan
    from mt_eval.harness.request import MethodSettings, RunRequest

    spec = corpus_spec(args)
    if spec is None:
        raise OptionError("--corpus", "is required: give --corpus FILE, or --source-file SRC [--reference-file REF]")
    return RunRequest(
        method=Path(args.method), corpus=spec, selection=selection_request(args), pair=args.pair,
        settings=MethodSettings(model=args.model, base_url=args.base_url, temperature=args.temperature,
                                max_tokens=args.max_tokens, params=method_params(args.param)),
        seed=args.seed, calls=RunSettings(batch_size=args.batch_size, concurrency=args.concurrency,
                                          timeout_s=args.timeout, retries=args.retries,
                                          retry_budget=args.retry_budget),
        latency=LatencyPlan(warmup=args.latency_warmup, sample=args.latency_sample,
                            repetitions=args.latency_repetitions), quiet=True, resamples=args.resamples,
        bootstrap=args.bootstrap, policy=Path(args.policy) if args.policy else None)


def _validate(path: Path, *, as_json: bool) -> int:
    """What a manifest's check prints: a path, or a value read from it, with its control and invisible characters
    escaped (as JSON's escapes with --json)."""
    from mt_eval.cli.json_output import json_text
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.harness.freeze_validation import validate_freeze

    manifest, problems = validate_freeze(path)
    errors = [p for p in problems if p.severity == "error"]
    frozen = manifest is not None and manifest.status == "frozen"
    named = escaped_for_terminal(str(path), one_line=True)  # (a line break in its name would cut the verdict)
    if as_json:
        sys.stdout.write(json_text({"manifest": str(path), "valid": not errors, "status": None if manifest is None
                                    else manifest.status, "problems": problems}))
    elif errors:
        print(f"{named}: not valid ({len(errors)} problem{'s' if len(errors) != 1 else ''})")
        for problem in errors:
            print(escaped_for_terminal("  " + problem.render().replace("\n", "\n  ")))
    elif not frozen:
        print(f"{named}: valid, but a draft, not frozen: run mt-eval freeze init again once every digest can be made")
    else:
        print(f"{named}: valid and frozen")
    return 0 if not errors and frozen else 1


def _show(path: Path) -> int:
    """Print the manifest: its path, and the values read from it (`_shown`), with their control and invisible
    characters escaped."""
    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.harness.freeze_validation import validate_freeze

    manifest, problems = validate_freeze(path, check_files=False)
    # A manifest edited by hand is shown (freeze validate says what is wrong with it), unless what would be shown is
    # not what the file holds: a key written twice (which of its values?), or a number too large (read as infinity).
    errors = [problem for problem in problems if manifest is None or problem.code in UNSHOWABLE]
    if manifest is None or errors:
        said = "not a freeze manifest" if manifest is None else \
            "not a valid freeze manifest, which run --freeze refuses"
        said_on_stderr("\n".join([f"mt-eval freeze show: {path} is {said}:",
                                   *("  " + problem.render() for problem in errors)]))
        return 1
    data = msgspec.to_builtins(manifest)
    print(f"{escaped_for_terminal(str(path), one_line=True)}: {_shown(manifest.freeze_version)}, "
          f"status {_shown(manifest.status)}, created {_shown(manifest.created_at)}")
    for section in ("sdk", "method", "corpus", "labels", "config", "budgets", "latency", "hardware", "scoring"):
        if data.get(section) is None:
            continue
        print(f"{section}:")
        for key, value in data[section].items():
            print(f"  {key}: {_shown(value)}")
    print("run it with:\n  " + escaped_for_terminal(run_command(path, manifest), one_line=True))
    return 0


def _shown(value: Any) -> str:
    """A value on one line; a text as it is, unless it holds a control or invisible character (a hand edit: a
    terminal would obey an ESC, U+202E turns around what follows it), which is then quoted as JSON with its
    escapes."""
    from mt_eval.control_chars import escaped_for_terminal, first_control

    if isinstance(value, str) and first_control(value) is None and escaped_for_terminal(value) == value:
        return value
    return "null" if value is None else escaped_for_terminal(json.dumps(value, ensure_ascii=False))


def run_command(path: Path, manifest: Any) -> str:
    """The ``mt-eval run`` command line that matches the manifest (paths relative to the working directory)."""
    from mt_eval.harness.freeze import param_argument

    def here(recorded: str) -> str:
        located = Path(recorded) if Path(recorded).is_absolute() else path.parent / recorded
        return os.path.relpath(located)

    corpus = manifest.corpus
    words = ["mt-eval", "run", "--method", here(manifest.method.path)]
    if corpus.format == "parallel":
        words += ["--source-file", here(corpus.path)]
        words += ["--reference-file", here(corpus.reference_path)] if corpus.reference_path is not None else []
    else:
        words += ["--corpus", here(corpus.path)]
        words += ["--columns", ",".join(corpus.columns)] if corpus.columns else []
    words += ["--pair", corpus.pair]
    words += manifest.corpus.selection_options
    words += [word for code in corpus.accepted_doubts or [] for word in ("--accept-doubt", code)]
    config, budgets, latency = manifest.config, manifest.budgets, manifest.latency
    for option, value in (("--model", config.model), ("--temperature", config.temperature),
                          ("--max-tokens", config.max_tokens), ("--seed", config.seed),
                          ("--batch-size", budgets.batch_size), ("--concurrency", budgets.concurrency),
                          ("--retries", budgets.retries), ("--retry-budget", budgets.retry_budget),
                          ("--timeout", budgets.timeout_s), ("--latency-warmup", latency.warmup_calls),
                          ("--latency-sample", latency.hot_sample), ("--latency-repetitions", latency.repetitions)):
        if value is not None:
            words += [option, f"{value:g}" if isinstance(value, float) else str(value)]
    for key, value in config.params.items():
        words += ["--param", param_argument(key, value)]
    if manifest.scoring is not None:
        words += ["--resamples", str(manifest.scoring.resamples), "--bootstrap", manifest.scoring.bootstrap]
        words += ["--policy", here(manifest.scoring.policy_path)] if manifest.scoring.policy_path else []
    return shlex.join([*words, "--freeze", str(path)])
