"""``mt-eval leaderboard``: the board from the store as a table, JSON or HTML, a static site, or served."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mt_eval.cli.arguments import POSTGRES_CONNECTING, pair_argument, port_number, positive_float
from mt_eval.cli.usage_errors import named_path

TYPE_CHECKING = False  # see mt_eval/__init__.py
if TYPE_CHECKING:
    from mt_eval.leaderboard.store import Damaged

DESCRIPTION = """\
Show the leaderboard of the published run cards. Rows are ranked only against rows of the same corpus
(sha256 and entries) scored with the same metric signatures; overlapping 95% intervals are ties. Across
corpora: Borda and task average (a method missing a corpus is shown as missing). Eligibility is shown
beside each score; class X methods never appear and class A2 rows are flagged "external dependency"."""
EPILOG = f"""\
examples:
  mt-eval leaderboard
  mt-eval leaderboard --pair 'eng>spa' --class pipeline --format json
  mt-eval leaderboard --out site                 # then open site/index.html
  mt-eval leaderboard serve --port 8765          # then open http://127.0.0.1:8765/
  mt-eval leaderboard serve --host 0.0.0.0       # open to the network: http://THIS-MACHINE:8765/
  mt-eval leaderboard --db team-board.db --max-p95 0.5 --out public

The store: --db URL or FILE, else $MT_EVAL_DB, else leaderboard.db in your data directory (PostgreSQL:
--db postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE).
{POSTGRES_CONNECTING}

exit status: 0 the board shown (or the site written); 1 the store cannot be opened or read, the site cannot be
written, serve cannot listen, or standard output cannot be written; 2 usage (an unknown --class, options that
do not go together); 130 interrupted (serve stops with Ctrl-C; 143 by SIGTERM and 129 by SIGHUP, as by Ctrl-C); 141
the reader of standard output went away"""


DEFAULT_TITLE = "mt-eval leaderboard"
DEFAULT_HOST = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description, parser.epilog = DESCRIPTION, EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("action", nargs="?", metavar="serve", type=_serve_word,
                        help="serve: the board from the live store over HTTP (on 127.0.0.1 unless --host)")
    parser.add_argument("--db", metavar="URL", help="store: sqlite:///PATH, postgresql://USER@HOST/DB or a file path "
                                                    "(default: $MT_EVAL_DB, else the user data directory)")
    parser.add_argument("--format", choices=["table", "json", "html"],
                        help="what to print: table (default), json or html (one page)")
    parser.add_argument("--json", dest="format", action="store_const", const="json",
                        help="print JSON: the same as --format json (as other commands' --json)")
    parser.add_argument("--out", type=named_path, metavar="DIR",
                        help="write the static site: index.html, cards/*.html and leaderboard.json (into a new or "
                             "empty directory, or over an earlier site)")
    parser.add_argument("--force", action="store_true", help="with --out: write the site into a directory that "
                                                             "holds other files too (they are left alone)")
    chosen = parser.add_argument_group("which rows")
    chosen.add_argument("--pair", action="append", default=[], type=pair_argument, metavar="'SRC>TGT'",
                        help="only this pair, quoted ('eng>spa') or as eng:spa; en:es names it too (repeatable)")
    chosen.add_argument("--corpus", action="append", default=[], metavar="NAME",
                        type=not_blank("a corpus's name or a prefix of its sha256"),
                        help="only this corpus: its name or a sha256 prefix (repeatable)")
    chosen.add_argument("--class", dest="classes", action="append", default=[], metavar="CLASS",
                        help="only this method class (pipeline, raw-llm, …) or dependency class (S, O, A1, A2)")
    board = parser.add_argument_group("the board's own eligibility conditions")
    board.add_argument("--max-p95", type=positive_float, metavar="SECONDS",
                       help="prize-eligible only with hot p95 latency at most this")
    board.add_argument("--hardware", metavar="TEXT", type=not_blank("the text its label must contain (A100)"),
                       help="prize-eligible only on hardware whose label contains TEXT")
    parser.add_argument("--title", type=page_title, help="the pages' title (--format html, --out or serve; default: "
                                                         f"{DEFAULT_TITLE})")
    parser.add_argument("--port", type=port_number, metavar="PORT",
                        help="serve: the port, 0 to 65535 (default 8765; 0: any free one)")
    parser.add_argument("--host", type=host_address, metavar="ADDRESS",
                        help=f"serve: the address to listen on (default {DEFAULT_HOST}: this machine only; 0.0.0.0 "
                             "or :: every interface, the board open to the network)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def _serve_word(text: str) -> str:
    """The one word the command takes, serve; another is refused with what was likely meant (a store given as
    `mt-eval publish` takes its cards, without --db; serve misspelled)."""
    import difflib

    if text == "serve":
        return text
    if difflib.get_close_matches(text, ["serve"], n=1, cutoff=0.6):
        raise argparse.ArgumentTypeError(f"got '{text}': did you mean serve?")
    raise argparse.ArgumentTypeError(f"got '{text}': the only word it takes is serve; name a store with --db URL, "
                                     f"the directory of a site to write with --out DIR")


def page_title(text: str) -> str:
    """An argparse type: a page's title, not blank, UTF-8 (the site's files are) without control characters."""
    from mt_eval.control_chars import first_control
    from mt_eval.lone_surrogates import first_lone

    position = first_lone(text)
    if position is not None:  # (bytes that are not UTF-8 in the argument)
        raise argparse.ArgumentTypeError(f"{text!r} is not valid UTF-8 (at character {position + 1}): give the title "
                                         "as UTF-8")
    if (control := first_control(text)) is not None:
        raise argparse.ArgumentTypeError(f"{text!r} holds the control character {control}: give a title without it")
    if not text.strip():  # (an empty <title> and heading: the tab named by the file's address)
        raise argparse.ArgumentTypeError(f"{text!r} is blank: give a title, or leave --title out for the default "
                                         f"({DEFAULT_TITLE})")
    return text


def not_blank(what: str) -> Callable[[str], str]:
    """An argparse type: a text that is not blank (``--hardware "$GPU"``, GPU unset, had made a condition every row
    met, and a blank ``--corpus`` one no row met)."""
    def given(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{text!r} is blank (a variable meant to hold it that is unset or "
                                             f"empty?): give {what}, or leave the option out")
        return text

    return given


def host_address(text: str) -> str:
    """An argparse type: the address serve listens on, an IP address or a name, not blank (an empty one is every
    interface: given so, the board is open to the network without it being asked for)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is blank: give an address ({DEFAULT_HOST}: this machine only; "
                                         "0.0.0.0: every interface), or leave --host out")
    host = text.strip().removeprefix("[").removesuffix("]")  # ([::1], as in a URL)
    if ":" in host:  # an IPv6 address, or a URL or host:port given whole
        import ipaddress

        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an address: give the address alone (--host 0.0.0.0), "
                                             "and the port with --port") from None
    return host


def run(args: argparse.Namespace) -> int:
    from mt_eval.errors import UsageError
    from mt_eval.leaderboard.board import Conditions, build_board
    from mt_eval.leaderboard.store import open_store

    _check_options(args)
    args.title = DEFAULT_TITLE if args.title is None else args.title
    unknown = [c for c in args.classes if c not in _classes()]
    if unknown:
        why = "class X methods never appear on the board" if unknown[0] == "X" else "not a class"
        raise UsageError(f"--class {unknown[0]}: {why}; choose from {', '.join(_classes())}")
    store = open_store(args.db, create=False, on_damaged=_warn_once())  # only read: StoreError, exit status 1
    conditions = Conditions(max_hot_p95_s=args.max_p95, hardware=args.hardware)
    filters = {"pair": args.pair, "corpus": args.corpus, "class": args.classes}

    def build() -> dict[str, Any]:
        rows = store.rows(corpora=args.corpus, classes=args.classes)
        if args.pair:  # in any spelling of its languages: --pair en:es shows the cards of eng>spa
            from mt_eval.pairs import same_languages

            shown = {p for p in {row["pair"] for row in rows} if any(same_languages(p, given) for given in args.pair)}
            rows = [row for row in rows if row["pair"] in shown]
        return build_board(rows, conditions, filters)

    with store:
        if args.action == "serve":
            return _serve(store, build, args)
        board = build()
        if args.out:
            return _site(board, store, Path(args.out), args)
        unmatched = _unmatched(store, board) if not board["groups"] and not board["unranked"] else None
    if args.format == "json":  # (the default, None, is the table)
        from mt_eval.cli.json_output import json_text

        sys.stdout.write(json_text(board))
    elif args.format == "html":
        from mt_eval.leaderboard.html import index_page

        sys.stdout.write(index_page(board, title=args.title))
    elif unmatched is not None:
        from mt_eval.control_chars import escaped_for_terminal

        print(escaped_for_terminal(unmatched))  # (the names of the store's corpora, as the table shows them)
    else:
        from mt_eval.leaderboard.text import render_text

        render_text(board, _console())
    return 0


NARROWEST = 64  # (the board's columns at their narrowest that still show every word of a row)


def _console() -> Any:
    """The console the board is drawn on: the terminal's width (or $COLUMNS), and never narrower than `NARROWEST`,
    where a narrower terminal wraps its lines (at 20 columns, rich had cut every column but the run's date to
    nothing: no method, no score)."""
    from rich.console import Console

    console = Console()
    if console.width < NARROWEST:
        console = Console(width=NARROWEST)
    console.on_broken_pipe = _reader_gone  # type: ignore[method-assign]
    return console


def _reader_gone() -> None:
    """The reader of the board went away (``| head``): 141 and quietly, as every command stops."""
    raise BrokenPipeError


def _check_options(args: argparse.Namespace) -> None:
    """Options that would be ignored are refused (`OptionError`, exit 2, before the store is opened): an ignored
    ``--json`` had printed a line of text where a script read JSON, an empty ``--out`` the table with exit 0."""
    from mt_eval.cli.usage_errors import OptionError

    shown = "--json" if args.format == "json" else f"--format {args.format}"
    if args.out is not None and not args.out.strip():
        raise OptionError("--out", "is blank: give the directory to write the site into (--out site)")
    if args.action == "serve" and args.out is not None:
        raise OptionError("--out", "not allowed with serve, which answers from the live store: write the static "
                                   "site with mt-eval leaderboard --out DIR (without serve)")
    if args.action == "serve" and args.format is not None:
        raise OptionError(shown.split()[0], "not allowed with serve, which serves every format: the page at /, the "
                                            "JSON at /leaderboard.json")
    if args.out is not None and args.format is not None:
        raise OptionError("--out", f"not allowed with {shown}: the site holds the board as index.html and as "
                                   "leaderboard.json; give --out DIR or " + shown)
    if args.force and args.out is None:
        raise OptionError("--force", "does nothing without --out DIR (it lets the site be written beside other files)")
    if args.title is not None and args.format in ("table", "json", None) and args.out is None \
            and args.action != "serve":
        output = "JSON" if args.format == "json" else "the table"
        raise OptionError("--title", f"titles the HTML pages, and {output} has no title: add --format html, --out DIR "
                                     "or serve, or leave --title out")
    for option, value, what in (("--port", args.port, "port"), ("--host", args.host, "address")):
        if value is not None and args.action != "serve":
            raise OptionError(option, f"is the {what} of mt-eval leaderboard serve: add serve, or leave {option} out")


def _unmatched(store: Any, board: dict[str, Any]) -> str | None:
    """When the board's filters leave nothing: what they were, and what the store holds, or that it holds nothing
    yet (None without filters: the board of an empty store says how to publish)."""
    from mt_eval.leaderboard.board import filters_given

    given = filters_given(board)
    rows = store.rows() if given else []
    if given and not rows:  # (not the filters' fault)
        return f"No run cards match {given}: the store holds none yet (mt-eval publish runs/NAME/card.json)."
    if not rows:
        return None
    corpora = sorted({row["corpus_name"] for row in rows})
    pairs = sorted({row["pair"] for row in rows})
    return (f"No run cards match {given}; the store holds {len(rows)} (corpora: {', '.join(corpora)}; "
            f"pairs: {', '.join(pairs)}): change or drop the filters.")


def _warn_once() -> Callable[[Damaged], None]:
    """Warn of each damaged row once: the board is shown without it (a row that cannot be read should not hide
    every other one) and the warning says which row it is and how to repair it."""
    from mt_eval.control_chars import escaped_for_terminal

    warned: set[tuple[int, str]] = set()

    def warn(damaged: Damaged) -> None:
        if (damaged.id, damaged.column) not in warned:
            warned.add((damaged.id, damaged.column))
            left = ("left off the board" if damaged.column == "row_json"
                    else "shown without its card's details")
            print(escaped_for_terminal(f"mt-eval leaderboard: warning: {left}: {damaged}"), file=sys.stderr, flush=True)

    return warn


def _classes() -> list[str]:
    from typing import get_args

    from mt_eval.dependency_classes import DependencyClass
    from mt_eval.manifest import MethodClass

    return [*get_args(MethodClass), *(c for c in get_args(DependencyClass) if c != "X")]


def _site(board: dict[str, Any], store: Any, out: Path, args: argparse.Namespace) -> int:
    from mt_eval.errors import ExpectedError
    from mt_eval.harness.run_directory import writable_directory
    from mt_eval.leaderboard.site import SiteRefused, write_site

    writable_directory(out, "the site")  # (a file where a directory of it goes is named, before anything is written)
    try:
        pages = write_site(board, store, out, title=args.title, quiet=args.quiet, force=args.force)
    except SiteRefused as exc:
        raise ExpectedError(str(exc)) from exc
    except OSError as exc:  # the path it failed at, named (a directory where a page goes, a file where cards/ is)
        where = exc.filename2 or exc.filename
        why = "it is not a directory" if isinstance(exc, FileExistsError) else exc.strerror or str(exc)
        named = f"{where}: " if where and Path(where) != out else ""
        raise ExpectedError(f"cannot write the site to {out}: {named}{why}") from exc
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.leaderboard.publish import shown_path

    index = (out / "index.html").resolve()
    cards = f"{board['cards']} run card{'s' if board['cards'] != 1 else ''}"
    print(escaped_for_terminal(f"wrote {shown_path(index)} ({cards}, {pages} detail page{'s' if pages != 1 else ''}); "
                               f"open {index.as_uri()}"))
    return 0


def _serve(store: Any, build: Any, args: argparse.Namespace) -> int:
    from mt_eval.cli.termination import stopped_by
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.leaderboard.serve import authority, make_server

    host = DEFAULT_HOST if args.host is None else args.host
    port = 8765 if args.port is None else args.port
    try:
        server = make_server(store, build, port=port, title=args.title, host=host)
    except OSError as exc:
        print(escaped_for_terminal(f"mt-eval leaderboard serve: cannot listen on {authority(host, port)}: "
                                   f"{exc.strerror or exc}{_listen_fix(exc)}"), file=sys.stderr)
        return 1
    port = server.server_address[1]
    url = f"http://{authority(host, port)}/"
    where = url
    if host in ("0.0.0.0", "::"):  # (a browser may refuse http://0.0.0.0/: the addresses that reach it)
        import socket

        url = f"http://{authority('127.0.0.1' if host == '0.0.0.0' else '::1', port)}/"
        where = f"every interface, port {port}: {url} here, http://{socket.gethostname()}:{port}/ from elsewhere"
    print(escaped_for_terminal(f"serving the leaderboard of {store.where} on {where} (Ctrl-C stops)"), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # the way it stops: 130, as for every command; the line says which server it was
        print(escaped_for_terminal(f"mt-eval leaderboard serve: stopped serving {url} ({stopped_by()})"),
              file=sys.stderr)
        return 130
    finally:
        server.server_close()
    return 0


def _listen_fix(exc: OSError) -> str:
    """What to do when serve cannot listen (after "; "), or ""."""
    import errno
    import socket

    if isinstance(exc, socket.gaierror):  # (a name that does not resolve, an address that is not one)
        return f"; give an IP address or a name of this machine (--host {DEFAULT_HOST}; 0.0.0.0: every interface)"
    return {errno.EADDRINUSE: "; give another --port (--port 0: any free one)",
            errno.EACCES: "; give a port above 1023 (--port 0: any free one)",
            errno.EADDRNOTAVAIL: f"; give an address of this machine (--host {DEFAULT_HOST}; 0.0.0.0: every "
                                 "interface)"}.get(exc.errno or 0, "")
