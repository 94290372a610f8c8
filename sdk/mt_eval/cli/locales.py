"""``mt-eval locales``: translate a champollion project's locale files with the methods its config names.

The Node command ``mt-eval-locales`` (package mt-eval-bridge) takes the same options and writes the same
files; see the README's champollion section. Both hold the project's lock (`mt_eval.locks.ProjectLock`)
while they write, so two runs of either never overlap; ``--dry-run`` writes nothing and takes no lock. Ctrl-C
stops sending: what was translated is written (with its lock entries), the report and what was kept are
printed, and the exit status is 130; a second Ctrl-C ends the process at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from mt_eval.cli.arguments import add_start_timeout_argument
from mt_eval.cli.termination import said
from mt_eval.cli.usage_errors import WAIT_LIMIT, WAIT_VALUES, named_path, wait_value
from mt_eval.control_chars import escaped_for_terminal
from mt_eval.errors import ExpectedError
from mt_eval.progress import LineInPlace

if TYPE_CHECKING:
    import anyio

    from mt_eval.champollion.config import ChampollionConfig
    from mt_eval.champollion.sync import PairMethod, SyncReport, Translate
    from mt_eval.loader import LoadedMethod
    from mt_eval.locks import Busy
    from mt_eval.loop_watchdog import LoopWatchdog

EXPECTED = (ValueError, LookupError, OSError)  # an unreadable config, an unknown locale, a plugin not found
SHOWS_GUEST_OUTPUT = True  # what a method in a bridge guest writes to stderr is shown (cli/guest_output.py)
# Ctrl-C before anything was sent (one later writes what was translated and says so: `interrupted_message`).
INTERRUPTED = "mt-eval locales: interrupted before anything was sent; nothing was written"
# After Ctrl-C, a method that blocks the loop this long is interrupted (long enough for the command's own writing of
# what was translated, which a large locale file can make last a second)
BLOCKED_S = 5.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Translate the input locale's JSON files into every target locale of a champollion "
                          "config, with the method plugin each pair names. Only missing or changed keys are sent "
                          "(the lock file records what produced each value); placeholders are kept exactly.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n  mt-eval locales --config examples/champollion-project\n"
                     "  mt-eval locales --config examples/champollion-project --dry-run --locale es\n"
                     "  mt-eval locales --config examples/champollion-project --wait 300   # if another run holds it\n"
                     "  mt-eval locales --config examples/champollion-project --json --quiet > report.json\n"
                     "\nOne process at a time writes a project (this command or the Node mt-eval-locales): a second "
                     "one refuses\nat once, naming the first, or waits with --wait.\n"
                     "\nexit status: 0 every key translated; 1 a key failed, a file cannot be read or written, a "
                     "plugin cannot start,\nthe config is wrong, or the project is in use; 2 usage; 130 interrupted "
                     "(what was translated is written);\n143 stopped by SIGTERM and 129 by SIGHUP (as by Ctrl-C)")
    parser.add_argument("--config", metavar="PATH", help="champollion.config.json, or the directory holding it "
                                                         "(default: ./champollion.config.json)", type=named_path)
    parser.add_argument("--locale", action="append", default=[], metavar="LOCALE",
                        help="only this target locale (repeatable; default: every pair)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be translated; send and write nothing")
    parser.add_argument("--force", action="store_true", help="translate every key again, whatever the lock file says")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument("--wait", nargs="?", const=math.inf, metavar="SECONDS",
                        help=f"when another process is translating this project, wait for it ({WAIT_LIMIT}) instead of "
                             "refusing at once")
    add_start_timeout_argument(parser, "each plugin run as a guest (a Node entry, a command)", with_timeout=False)


def project_wait_s(value: str | float | None) -> float | None:
    """``--wait``: None when not given, infinity when given alone or as inf, else its seconds (0 or more);
    `UsageError` for anything else (as ``mt-eval-locales`` says it)."""
    from mt_eval.errors import UsageError

    if value is None or isinstance(value, float):
        return value
    if (seconds := wait_value(value)) is None:
        raise UsageError(f"--wait {value}: {WAIT_VALUES}")
    return seconds


def run(args: argparse.Namespace) -> int:
    wait_s = project_wait_s(args.wait)
    try:
        return _run(args, wait_s)
    except KeyboardInterrupt:  # before anything was sent (later, the report says what was kept): `main` says so
        _json_error(args, "interrupted", said(INTERRUPTED).removeprefix("mt-eval locales: "))
        raise


def _run(args: argparse.Namespace, wait_s: float | None) -> int:
    """The command, each error it stops on also given as the JSON report with --json."""
    from mt_eval.champollion.methods import MethodCannotStart
    from mt_eval.locks import Busy

    expected = (ExpectedError, *EXPECTED)
    try:
        config, methods = _chosen(args)
    except expected as error:
        _json_error(args, "config", error)
        raise
    try:
        with _project_lock(config.locales_dir, dry_run=args.dry_run, wait_s=wait_s):
            report = _translate(config, methods, args)
    except Busy as busy:  # exit status 1, as for any project it cannot write
        refusal: ExpectedError = busy
        if wait_s is not None:
            refusal = StillBusy(busy, wait_s)
        else:
            busy.fix = "Wait for it to finish, or give --wait to wait"
        _json_error(args, "busy", refusal)
        raise refusal from None
    except MethodBlocked as blocked:
        _json_error(args, "method", blocked)
        print(escaped_for_terminal(f"mt-eval locales: {blocked}"), file=sys.stderr)
        return 1
    except expected as error:
        _json_error(args, "method" if isinstance(error, MethodCannotStart) else "project", error)
        raise
    from mt_eval.champollion.report import interrupted_message, render_json, render_text
    from mt_eval.cli.json_output import unseen_escaped

    kept = said(interrupted_message(report)) if report.interrupted else None  # ("interrupted by SIGTERM; kept …")
    # (keys, file names, locales and a method's errors with their control and invisible characters escaped)
    sys.stdout.write(unseen_escaped(render_json(report, interrupted=kept)) if args.json
                     else escaped_for_terminal(render_text(report)))
    if kept is not None:
        print(escaped_for_terminal(f"mt-eval locales: {kept}"), file=sys.stderr)
        return 130
    return 0 if report.ok else 1


def _chosen(args: argparse.Namespace) -> tuple[ChampollionConfig, list[PairMethod]]:
    """The config (its warnings said) and the method of each pair chosen; raises when either cannot be used."""
    from mt_eval.champollion.config import read_config
    from mt_eval.champollion.languages import same_locale
    from mt_eval.champollion.sync import pair_method

    config = read_config(args.config)
    for warning in config.warnings:
        print(escaped_for_terminal(warning.render()), file=sys.stderr)
    unknown = [wanted for wanted in args.locale if not any(same_locale(wanted, p.target) for p in config.pairs)]
    if unknown:
        raise ValueError(f"--locale {', '.join(unknown)}: not a target locale of {config.file} (its targets: "
                         f"{', '.join(p.target for p in config.pairs)})")
    config.check_locales_dir()
    pairs = [p for p in config.pairs if not args.locale or any(same_locale(w, p.target) for w in args.locale)]
    return config, [pair_method(config, pair) for pair in pairs]


def _translate(config: ChampollionConfig, methods: list[PairMethod], args: argparse.Namespace) -> SyncReport:
    """Run `sync_locales` with each pair's plugin, closing them all; `MethodBlocked` when one blocked the loop."""
    import anyio

    from mt_eval import event_loop
    from mt_eval.champollion.methods import open_pair_method
    from mt_eval.champollion.sync import sync_locales
    from mt_eval.guarded_calls import guarded_close, prints_to_stderr
    from mt_eval.loop_watchdog import LoopWatchdog, find_blocked

    opened: list[LoadedMethod] = []
    progress = _Progress(sys.stderr, quiet=args.quiet)
    waiting = _Waiting(progress)  # (a method that takes long is said to be waited for)

    async def main() -> SyncReport:
        stop = anyio.Event()
        limit = max(max((m.run_config.get("timeout_s", 120.0) * int(m.run_config["batch_size"])
                         for m in methods), default=0.0), 0.5)
        watchdog = LoopWatchdog(limit, hard_message="mt-eval locales: a method blocked the event loop and could not "
                                "be interrupted; the locales finished before are saved", hard_exit_code=1)
        try:
            with watchdog, _interrupts(stop, watchdog) as interrupted, waiting:

                async def open_method(method: PairMethod) -> Translate:
                    return waiting.watched(await open_pair_method(method, opened, interrupted.is_set), method)

                written.append(await sync_locales(config, methods, open_method, dry_run=args.dry_run,
                                                  force=args.force, progress=progress, stop=stop))
                return written[0]
        finally:
            progress.close()
            for loaded in opened:  # (each bounded: one that fails or hangs is a warning)
                await guarded_close(loaded.method, loaded.method_id, prog="mt-eval locales",
                                    directory=loaded.directory)

    written: list[SyncReport] = []
    try:
        with prints_to_stderr(), _warnings_said():  # what the methods print and their hosts warn of (in main)
            return event_loop.run(main)  # (closed without waiting for a method's task that ignores cancellation)
    except KeyboardInterrupt:  # (Ctrl-C while the methods were closed, once the files were written: said as kept)
        if not written:
            raise
        written[0].interrupted = True
        return written[0]
    except BaseException as error:
        blocked = find_blocked(error)
        if blocked is None:
            raise
        raise MethodBlocked(f"a method {blocked} inside translate() (a synchronous call in an async method: "
                            "time.sleep, a blocking HTTP client, a long loop) and was stopped; the locales finished "
                            "before are saved. Fix: await asynchronous I/O in translate(), or run blocking code with "
                            "`await asyncio.to_thread(...)`") from None


@contextlib.contextmanager
def _warnings_said() -> Iterator[None]:
    """What the SDK warns of while the methods run (a method's results for entries it was not sent, a guest
    restarted), in process or through a guest, said as this command's warnings — ``mt-eval locales: warning: pair
    KEY: …`` — as ``mt-eval-locales`` says them. A guest's own output is left to `mt_eval.cli.guest_output`."""
    import logging

    from mt_eval.bridge import GUEST_LOGGER
    from mt_eval.champollion.methods import PAIR_AT_WORK

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.name == GUEST_LOGGER or record.name.startswith(f"{GUEST_LOGGER}."):
                return
            said = "warning: " if record.levelno < logging.ERROR else ""
            if (pair_key := PAIR_AT_WORK.get()) is not None:  # (the pair it concerns, as `mt-eval-locales` names it)
                said += f"pair {pair_key}: "
            with contextlib.suppress(OSError, ValueError):  # (stderr's reader gone: nowhere left to say it)
                sys.stderr.write(escaped_for_terminal(f"mt-eval locales: {said}{record.getMessage()}") + "\n")
                sys.stderr.flush()

    logger, handler = logging.getLogger("mt_eval"), Said(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


@contextlib.contextmanager
def _interrupts(stop: anyio.Event, watchdog: LoopWatchdog) -> Iterator[threading.Event]:
    """Ctrl-C sets ``stop`` (what was translated is written, and the run ends) and the event yielded (at once:
    no method is called after it); a second one ends the process. SIGTERM and SIGHUP come as Ctrl-C
    (`mt_eval.cli.termination`). The handler is Python's own, not the event loop's: it also runs while a method
    blocks the loop, and then interrupts the blocked call right there (its keys fail; those translated before
    are written)."""
    from mt_eval.cli.termination import INTERRUPTED, exit_status
    from mt_eval.loop_watchdog import BLOCKED_NOW_S
    from mt_eval.process_exit import real_exit

    loop = asyncio.get_running_loop()
    interrupted = threading.Event()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if interrupted.is_set():
            print("\nmt-eval locales: interrupted again: stopped at once", file=sys.stderr, flush=True)
            real_exit(exit_status(INTERRUPTED))
        interrupted.set()
        loop.call_soon_threadsafe(stop.set)
        watchdog.hurry(BLOCKED_S, Interrupted)  # a call that blocks the loop from now on is interrupted
        if watchdog.blocked_s() >= BLOCKED_NOW_S:  # one that blocks it now, at once (as the watchdog judges it)
            raise Interrupted(watchdog.blocked_s())

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


class Interrupted(Exception):
    """Ctrl-C while a method blocked the event loop: raised in the method's blocked call, which fails."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"interrupted (Ctrl-C) while the method blocked the event loop ({seconds:.1f} s)")


class MethodBlocked(Exception):
    """A method blocked the event loop and was stopped; the message says how to fix it."""


def _json_error(args: argparse.Namespace, kind: str, error: BaseException | str) -> None:
    """With --json, the error as the report on stdout (what is printed on stderr, after the command's name)."""
    if args.json:
        from mt_eval.champollion.report import render_error
        from mt_eval.cli.json_output import unseen_escaped

        message = error.one_line() if isinstance(error, ExpectedError) else str(error)
        sys.stdout.write(unseen_escaped(render_error(kind, message, dry_run=args.dry_run)))


def _project_lock(locales_dir: Path, *, dry_run: bool, wait_s: float | None
                  ) -> contextlib.AbstractContextManager[Any]:
    """The project's lock (nothing for a dry run, which writes nothing)."""
    from mt_eval.locks import ProjectLock

    if dry_run:
        return contextlib.nullcontext()
    return ProjectLock(locales_dir, command="mt-eval locales").acquire(
        wait_s=wait_s, on_wait=lambda busy: print(escaped_for_terminal(f"mt-eval locales: {busy}; waiting for it "
                                                                       "(--wait)"), file=sys.stderr))


class StillBusy(ExpectedError):
    """Another run still holds the project once ``--wait`` has run out."""

    def __init__(self, busy: Busy, waited_s: float) -> None:
        from mt_eval.js_text import js_number
        from mt_eval.locks import describe_holder

        super().__init__(f"{busy.what} is still in use by {describe_holder(busy.holder)} after waiting "
                         f"{js_number(waited_s)} s for it. Let it finish, then run again, or give a longer --wait")


class _Progress(LineInPlace):
    """``es: 8/12 strings answered``: rewritten in place on a terminal, one line per batch elsewhere; `say` puts a
    line between the counts (on a terminal, in their place until the next count)."""

    def __call__(self, locale: str, done: int, total: int) -> None:
        from mt_eval.champollion.report import progress_line

        self.show(progress_line(locale, done, total), last=done == total)


class _Waiting:
    """The translate calls not answered yet, said with `_Progress.say` (`waiting_line`) once the oldest has waited
    ``WAITING_AFTER_S``, and again every ``WAITING_EVERY_S`` while calls wait (as ``mt-eval-locales`` says them).
    Checked by the event loop, inside the ``with`` block."""

    def __init__(self, progress: _Progress) -> None:
        self.progress = progress
        self.calls: dict[object, tuple[str, int, float, float]] = {}  # (locale, strings, started, timeout_s)
        self.said_at = -math.inf
        self.timer: asyncio.TimerHandle | None = None

    def watched(self, translate: Translate, method: PairMethod) -> Translate:
        import msgspec

        from mt_eval.records import RunConfig

        async def call(entries: list[dict[str, Any]], run_config: dict[str, Any]) -> list[dict[str, Any]]:
            token = object()
            timeout_s = msgspec.convert(run_config, RunConfig).timeout_s
            self.calls[token] = (method.pair.target, len(entries), time.monotonic(), timeout_s)
            try:
                return await translate(entries, run_config)
            finally:
                del self.calls[token]

        return call

    def __enter__(self) -> _Waiting:
        self._check()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def _check(self) -> None:
        from mt_eval.champollion import report

        self.timer = asyncio.get_running_loop().call_later(min(1.0, report.WAITING_AFTER_S / 2), self._check)
        if not self.calls:
            return
        locale, _, started, timeout_s = min(self.calls.values(), key=lambda call: call[2])
        now = time.monotonic()
        if now - started < report.WAITING_AFTER_S or now - self.said_at < report.WAITING_EVERY_S:
            return
        self.said_at = now
        strings = sum(call[1] for call in self.calls.values())
        self.progress.say(report.waiting_line(locale, strings, len(self.calls), now - started, timeout_s))
