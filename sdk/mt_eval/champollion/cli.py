"""``mt-eval locales``: translate a champollion project's locale files with the methods its config names.

The Node command ``mt-eval-locales`` (package mt-eval-bridge) takes the same options and writes the same
files; see the README's champollion section.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mt_eval.champollion.sync import PairMethod, Translate
    from mt_eval.loader import LoadedMethod


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Translate the input locale's JSON files into every target locale of a champollion "
                          "config, with the method plugin each pair names. Only missing or changed keys are sent "
                          "(the lock file records what produced each value); placeholders are kept exactly.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n  mt-eval locales --config examples/champollion-project\n"
                     "  mt-eval locales --dry-run --locale es\n  mt-eval locales --json --quiet > report.json")
    parser.add_argument("--config", metavar="PATH", help="champollion.config.json, or the directory holding it "
                                                         "(default: ./champollion.config.json)")
    parser.add_argument("--locale", action="append", default=[], metavar="LOCALE",
                        help="only this target locale (repeatable; default: every pair)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be translated; send and write nothing")
    parser.add_argument("--force", action="store_true", help="translate every key again, whatever the lock file says")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def run(args: argparse.Namespace) -> int:
    import anyio

    from mt_eval.champollion.config import read_config
    from mt_eval.champollion.languages import same_locale
    from mt_eval.champollion.report import render_json, render_text
    from mt_eval.champollion.sync import pair_method, sync_locales

    try:
        config = read_config(args.config)
        for warning in config.warnings:
            print(warning.render(), file=sys.stderr)
        unknown = [wanted for wanted in args.locale if not any(same_locale(wanted, p.target) for p in config.pairs)]
        if unknown:
            raise ValueError(f"--locale {', '.join(unknown)}: not a target locale of {config.file} (its targets: "
                             f"{', '.join(p.target for p in config.pairs)})")
        pairs = [p for p in config.pairs if not args.locale or any(same_locale(w, p.target) for w in args.locale)]
        methods = [pair_method(config, pair) for pair in pairs]
    except (ValueError, LookupError, OSError) as exc:
        print(f"mt-eval locales: {exc}", file=sys.stderr)
        return 1
    opened: list[LoadedMethod] = []
    progress = _Progress(sys.stderr, quiet=args.quiet)

    async def main() -> Any:
        try:
            return await sync_locales(config, methods, lambda m: _open(m, opened), dry_run=args.dry_run,
                                      force=args.force, progress=progress)
        finally:
            progress.close()
            for loaded in opened:
                close = getattr(loaded.method, "aclose", None)
                if close is not None:
                    await close()

    try:
        report = anyio.run(main)
    except (ValueError, OSError) as exc:
        print(f"mt-eval locales: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(render_json(report) if args.json else render_text(report))
    return 0 if report.ok else 1


def _open(method: PairMethod, opened: list[LoadedMethod]) -> Translate:
    """The pair's plugin as a translate function (Python in-process; Node and commands through the bridge)."""
    import msgspec

    from mt_eval.loader import load_method
    from mt_eval.records import RunConfig
    from mt_eval.results import ResultNotes, results_for

    loaded = load_method(method.directory, needs="translate")
    opened.append(loaded)
    notes = ResultNotes()

    async def translate(entries: list[dict[str, Any]], run_config: dict[str, Any]) -> list[dict[str, Any]]:
        raw = await loaded.method.translate([dict(e) for e in entries], msgspec.convert(run_config, RunConfig))
        paired, _unknown = results_for(entries, raw, label="the method", notes=notes)
        return [{"id": r.id, "predicted": r.predicted, "error": r.error} for r in paired]

    return translate


class _Progress:
    """``es: 8/12 strings translated``: rewritten in place on a terminal, one line per batch elsewhere."""

    def __init__(self, stream: Any, *, quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self.open_line = False

    def __call__(self, locale: str, done: int, total: int) -> None:
        from mt_eval.champollion.report import progress_line

        if self.quiet:
            return
        line = progress_line(locale, done, total)
        if self.tty:
            self.stream.write(f"\r{line}\x1b[K" + ("\n" if done == total else ""))
            self.open_line = done != total
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.open_line:
            self.stream.write("\n")
            self.open_line = False
