"""``mt-eval translate DIR TEXT…``: try a method plugin on a few sentences."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mt_eval.cli.arguments import (
    add_model_arguments,
    add_start_timeout_argument,
    doubt_code,
    pair_argument,
    positive_float,
    with_examples,
)
from mt_eval.cli.translate_output import InOrderPrinter
from mt_eval.cli.usage_errors import named_path, plugin_operand

if TYPE_CHECKING:
    from mt_eval.records import RunConfig, TranslationResult

STDIN_FILE = Path("-")  # --file -: standard input, read as the file /dev/stdin is (a file named -: ./-)
SHOWS_GUEST_OUTPUT = True  # what a method in a bridge guest writes to stderr is shown (cli/guest_output.py)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Load a method plugin and translate the sentences given as arguments and those of --file "
                          "FILE (the arguments first), or one sentence per line of standard input (UTF-8). Each "
                          "translation is printed on a line of its own, [error] … or [declined] … in its place when "
                          "the method failed on it or declined it (the method's message with its control characters "
                          "escaped), as soon as it and the lines before it are done (sent at most 16 at a time, 8 "
                          "calls at once). On a terminal, the control and invisible characters of a translation are "
                          "shown escaped (ESC as \\x1b, U+202E as \\u202e; in --json as JSON escapes), tabs kept; "
                          "piped or redirected, it is written as the method gave it. Ctrl-C keeps the lines printed.")
    parser.add_argument("plugin", type=plugin_operand, metavar="DIR", help="plugin directory")
    parser.add_argument("texts", nargs="*", metavar="TEXT",
                        help="sentences (default: the lines of stdin, split on LF only; a blank line is printed "
                             "blank, so the output has one line per line of the input)")
    parser.add_argument("--pair", type=pair_argument, metavar="'SRC>TGT'",
                        help="language pair, quoted ('eng>spa') or as eng:spa (default: the method's first "
                             "supported pair)")
    parser.add_argument("--file", "-f", type=named_path, metavar="FILE",
                        help="read the sentences from FILE, one per line (-: standard input), translated after any "
                             "TEXT, or the sources of a .json, .jsonl or .tsv corpus (read and sent as mt-eval run "
                             "does: an empty source too, a negative control in the pair it names); a pipe or a name "
                             "without extension is a JSON corpus when it begins with [ or {, a TSV one with --columns, "
                             "else text")
    parser.add_argument("--columns", metavar="NAMES",
                        help="with --file: a .tsv corpus's columns, comma-separated, e.g. id,source,reference")
    parser.add_argument("--accept-doubt", action="append", default=[], type=doubt_code, metavar="CODE",
                        help="with --file: read the corpus although this doubt was detected (repeatable)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON result per line (its id: the line's number, or the corpus entry's id)")
    parser.add_argument("--timeout", type=positive_float, default=120.0, metavar="S",
                        help="seconds per sentence (default 120); past it the sentence fails as timed out")
    add_start_timeout_argument(parser, "the method, when it runs as a guest (a Node entry, a command),")
    add_model_arguments(parser.add_argument_group("passed to the method (RunConfig), as mt-eval run passes them"))
    with_examples(parser, 'mt-eval translate examples/lexicon-eng-spa "Good morning, my friend."',
                  "mt-eval translate examples/lexicon-eng-spa --file examples/lexicon-eng-spa/sample.txt",
                  "mt-eval translate plugins/my-llm --base-url http://127.0.0.1:8000/v1 --model NAME \"Hello.\"",
                  "mt-eval translate my-method --param api_url=http://127.0.0.1:5000/translate \"Hello.\"",
                  "echo 'The cat drinks water.' | mt-eval translate examples/lexicon-eng-spa --pair eng:spa --json",
                  "mt-eval translate examples/apertium-eng-spa --pair 'spa>eng' \"Buenos días.\"   # needs apertium",
                  exit_statuses="0 no sentence failed; 1 one did, the plugin cannot be loaded or its method "
                  "cannot start, or standard\noutput cannot be written; 2 usage; 130 interrupted (the lines printed "
                  "are kept); 141 the reader of\nstandard output went away")


def run(args: argparse.Namespace) -> int:
    reading = [flag for flag, given in (("--columns", args.columns), ("--accept-doubt", args.accept_doubt)) if given]
    if reading and not args.file:
        from mt_eval.cli.usage_errors import OptionError

        raise OptionError(reading[0], "says how a corpus given with --file is read: give --file FILE with it, or "
                          f"leave {reading[0]} out")
    columns = [name.strip() for name in args.columns.split(",")] if args.columns else None
    from mt_eval.cli.method_params import method_params

    settings = {"model": args.model, "base_url": args.base_url, "temperature": args.temperature,
                "max_tokens": args.max_tokens, "params": method_params(args.param)}
    return translate(Path(args.plugin), args.texts, pair=args.pair, as_json=args.json,
                     file=_file_given(args.file) if args.file else None, columns=columns, accept=args.accept_doubt,
                     timeout_s=args.timeout, settings=settings)


def _file_given(text: str) -> Path:
    """``--file`` as a path: ``-`` is standard input (`STDIN_FILE`), and a file named ``-`` (``./-``, which a path
    spells ``-`` too) is that file, by its full path."""
    return STDIN_FILE if text == "-" else Path(text) if Path(text) != STDIN_FILE else Path(text).absolute()


def translate(plugin: Path, texts: Sequence[str], *, pair: str | None, as_json: bool, file: Path | None = None,
              columns: list[str] | None = None, accept: Sequence[str] = (), timeout_s: float = 120.0,
              settings: dict[str, Any] | None = None) -> int:
    """Translate ``texts`` (then ``file``'s) with the plugin; ``settings``: what the method gets in its config
    besides the pair and ``timeout_s`` (model, base_url, temperature, max_tokens, params), as ``mt-eval run``
    gives them. The exit status."""
    import anyio
    import msgspec

    from mt_eval.corpus.families import by_pair
    from mt_eval.guarded_calls import (
        CallFailed,
        backstop_for,
        guarded_close,
        guarded_translate,
        prints_to_stderr,
        split_on_failure,
    )
    from mt_eval.loader import PluginLoadError, load_method
    from mt_eval.loop_watchdog import LoopBlocked, LoopWatchdog
    from mt_eval.method_protocol import calls_at_once
    from mt_eval.method_start import StartFailed, start_method
    from mt_eval.pairs import quoted, supported_form
    from mt_eval.records import RunConfig, TranslationResult
    from mt_eval.results import ResultNotes, error_result, results_for
    from mt_eval.unmatched_results import strays_dropped

    try:
        with prints_to_stderr():  # what the method prints is not a translation
            loaded = load_method(plugin, needs="translate")
    except PluginLoadError as exc:
        _say(str(exc))  # (the plugin's path, and values read from its files)
        return 1
    supported = loaded.manifest.supported_pairs
    pair = pair or (supported[0] if supported else None)
    if pair is None:
        _say(f"{loaded.method_id} declares no supported pair: give one, e.g. --pair 'eng>spa' (or --pair eng:spa)")
        return 2
    method_pair = supported_form(pair, supported)
    if method_pair is None:
        _say(f"{loaded.method_id} supports {quoted(supported)}, not '{pair}': choose one with --pair, e.g. "
             f"--pair '{supported[0]}'")
        return 2
    pair = method_pair
    source_lang, _, target_lang = pair.partition(">")
    try:
        given = {key: value for key, value in (settings or {}).items() if value is not None}
        config = msgspec.convert({"source_lang": source_lang, "target_lang": target_lang, "timeout_s": timeout_s,
                                  **given}, RunConfig)
    except msgspec.ValidationError as exc:  # (the options' own types refuse a bad setting first)
        _say(f"--pair '{pair}': {exc}" if "_lang`" in str(exc) else f"invalid configuration: {exc}")
        return 2
    texts = [_as_utf8(text) for text in texts]
    for number, text in enumerate(texts, start=1):
        if (position := _surrogate_at(text)) is not None:  # bytes that are not UTF-8 in an argument
            _say(f"TEXT {number} is not valid UTF-8 (at character {position + 1}): give the sentences as UTF-8")
            return 2
    corpus_ids: dict[int, str] = {}
    own_pairs: dict[int, str] = {}  # line number → the pair a corpus's negative control is translated in
    if file is not None:
        if file == STDIN_FILE:
            _prompt_on_a_terminal()
        try:
            sourced = _file_sources(Path("/dev/stdin") if file == STDIN_FILE else file, pair, columns, accept)
            corpus_ids = {len(texts) + i: entry_id for i, (entry_id, _, _) in enumerate(sourced, start=1) if entry_id}
            own_pairs = {len(texts) + i: own for i, (_, _, own) in enumerate(sourced, start=1) if own}
            texts = [*texts, *(source for _, source, _ in sourced)]
        except OSError as exc:
            _say(f"--file {file}: cannot read it: {exc.strerror or exc}")
            return 2
        except ValueError as exc:  # a CorpusError: what is wrong with the file (its own line), with the fix
            problems = getattr(exc, "problems", [])
            said = (f"{problems[0].message}" + (f"; {problems[0].hint}" if problems[0].hint else "")
                    if len(problems) == 1 and problems[0].path == "$" else str(exc))
            _say(f"--file {file}: {said}")
            return 2
    elif not texts:
        _prompt_on_a_terminal()
        try:
            texts = utf8_lines(sys.stdin.buffer.read())
        except ValueError as exc:
            _say(f"standard input: {exc}")
            return 2
    # A blank line is not sent: it is printed blank, so the output has one line per line of the input. A corpus's
    # entries are all sent, as a run sends them (an empty source is a negative control's), each in its own pair.
    entries = [{"id": str(i), "source": text} | ({"family": "negative", "pair": own_pairs[i]} if i in own_pairs else {})
               for i, text in enumerate(texts, start=1) if text.strip() or i in corpus_ids]
    unknown: list[object] = []

    class StraysKept(ResultNotes):  # a guest's host's results matching no entry are said once, as in process
        def stray_warning(self, strays: list[object], item: str = "entry") -> None:
            unknown.extend(strays)

    notes = StraysKept()
    if isinstance(getattr(loaded.method, "result_notes", None), ResultNotes):  # (what a guest's host changed too)
        loaded.method.result_notes = notes  # type: ignore[attr-defined]
    printer = InOrderPrinter(as_json, corpus_ids)

    async def call(part: list[dict[str, str]], config: RunConfig, limiter: anyio.CapacityLimiter
                   ) -> list[TranslationResult]:
        started = time.perf_counter()  # (a result without latency_s gets its share of the call, as in a run)
        try:
            sent = [{"id": e["id"], "source": e["source"]} for e in part]  # (not the fields a method never sees)
            async with limiter:  # (every call holds one: a timed-out part's sentences, sent alone, too)
                raw = await guarded_translate(loaded.method, sent, config, timeout_s=timeout_s,
                                              directory=loaded.directory,
                                              backstop_s=backstop_for(loaded.method, timeout_s, len(part)))
        except LoopBlocked as blocked:  # (raised by the watchdog in the code that blocked the loop)
            raise CallFailed(f"translate() blocked the event loop for {blocked.seconds:.1f} s (a synchronous call "
                             "in an async method: time.sleep, a blocking HTTP client, a long loop)") from None
        paired, strays = results_for(part, raw, label="the method", notes=notes,
                                     elapsed_s=time.perf_counter() - started)
        unknown.extend(strays)
        return paired

    def failed_entry(entry: dict[str, str], message: str) -> TranslationResult:
        return error_result(entry["id"], message)

    async def send(part: list[dict[str, str]], config: RunConfig, limiter: anyio.CapacityLimiter) -> None:
        # a call that raises or calls sys.exit() fails only the sentences it fails on, as in a run
        for result in await split_on_failure(lambda some: call(some, config, limiter), part, failed_entry,
                                             at_once=int(limiter.total_tokens)):
            printer.done(result)

    size = max(1, min(config.batch_size, -(-len(entries) // config.concurrency)))  # (few: one a call)

    async def translate_then_close() -> None:
        limit = max(timeout_s * size, 0.5)  # (--timeout is per sentence: a call of `size` has that many)
        try:
            if entries:  # a method that cannot start is said once, as `mt-eval run` says it, before any line
                await start_method(loaded, config, by_translate=True)
            for number, text in enumerate(texts, start=1):
                if not text.strip() and number not in corpus_ids:
                    printer.done(TranslationResult(id=str(number), predicted=""))
            with LoopWatchdog(limit, hard_limit_s=max(5.0, limit), hard_exit_code=1,
                              hard_message=f"mt-eval translate: {loaded.method_id} blocked the event loop and could "
                                           "not be interrupted; the lines printed are its translations"):
                async with anyio.create_task_group() as group:
                    printer.on_error = group.cancel_scope.cancel  # (nowhere to print: nothing more is sent)
                    limiter = anyio.CapacityLimiter(calls_at_once(loaded.method, config.concurrency))
                    for in_pair, members in by_pair(entries, config):
                        for start in range(0, len(members), size):
                            group.start_soon(send, list(members[start:start + size]), in_pair, limiter)
        finally:  # programs the method started end with the command (a bounded wait: a warning, not a hang)
            await guarded_close(loaded.method, loaded.method_id, prog="mt-eval translate", directory=loaded.directory)

    from mt_eval import event_loop

    try:
        with prints_to_stderr():
            event_loop.run(translate_then_close)
    except StartFailed as exc:
        _say(str(exc))
        return 1
    except KeyboardInterrupt as interrupted:
        said = (f"\nmt-eval translate: interrupted; printed the first {printer.printed} of {len(texts)} lines (each "
                "translated, or why not); translate the rest again")
        interrupted.message = said  # type: ignore[attr-defined]
        raise
    finally:
        printer.close()
    if isinstance(printer.error, BrokenPipeError):  # the reader went away (`| head`): stopped quietly, as tools do
        raise printer.error
    if printer.error is not None:
        _say(f"cannot write the translations to standard output: {printer.error.strerror or printer.error} (after "
             f"{printer.printed} of {len(texts)} lines)")
        return 1
    if notes:
        _say(f"{loaded.method_id}: results accepted after changes: {notes.summary()}")
    if unknown:
        _say(f"{loaded.method_id}: {strays_dropped(unknown)}")
    if printer.failed:
        _say(f"{loaded.method_id}: {printer.failed} of {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} failed")
    return 1 if printer.failed else 0


def _say(message: str) -> None:
    """Print ``message`` on stderr, its control and invisible characters (of a path, of a method's id) escaped."""
    from mt_eval.cli import said_on_stderr

    said_on_stderr(f"mt-eval translate: {message}")


def _prompt_on_a_terminal() -> None:
    """When standard input is a terminal, say what it waits for, rather than seem to hang."""
    if sys.stdin.isatty():
        _say("type the sentences, one per line, then Ctrl-D to translate them (or give them as arguments, or "
             "--file FILE)")


def _file_sources(file: Path, pair: str, columns: list[str] | None = None, accept: Sequence[str] = ()
                  ) -> list[tuple[str | None, str, str | None]]:
    """The entry ids, sources and own pairs (a negative control's, `pair_of`) of a corpus file (.json, .jsonl,
    .tsv, read as ``mt-eval run`` reads them; a pipe or a name without extension when its content begins with
    ``[`` or ``{``, or --columns is given), else the lines (with no id nor pair) of a text file, read as
    ``mt-eval run --source-file`` reads them (gzip, UTF-16 with its byte-order mark, NUL bytes refused; lines
    holding TAB-separated columns refused unless accepted)."""
    from mt_eval.corpus.files import FORMATS, read_file
    from mt_eval.corpus.reader import read_corpus

    suffix = Path(file.name.lower().removesuffix(".gz")).suffix
    piped = suffix not in FORMATS and (not file.is_file() or file == Path("/dev/stdin"))
    unnamed = piped or not suffix  # its content says what it is (a pipe: read once)
    read = read_file(file, "source", unnamed=True) if unnamed else None
    if suffix in FORMATS or (read is not None and (read.text.lstrip()[:1] in ("[", "{") or columns is not None)):
        from mt_eval.corpus.families import pair_of

        corpus = read_corpus(file, columns=columns, accept=list(accept), pair=pair, already_read=read)
        return [(str(entry["id"]), entry["source"], pair_of(entry)) for entry in corpus.entries]
    from mt_eval.corpus.doubts import Doubt, find_doubts, refuse_doubts
    from mt_eval.corpus.parallel import read_parallel

    lines = read_parallel(file, already_read=read)
    hint = ("a TSV corpus from a pipe is read with mt-eval run's rules when named .tsv: save it as FILE.tsv and give "
            "--file FILE.tsv (or give its --columns)" if piped else
            f"translate a TSV corpus with --file {file.stem}.tsv (renamed)")
    hints = {"tabs-in-parallel-text": hint, "markup-not-text": "extract the segments, one sentence per line (a WMT "
             "test set: sacrebleu -t wmt19 -l de-en --echo src > src.de), and give that file with --file",
             "json-in-parallel-text": f"translate a corpus of JSON lines with --file {file.stem}.jsonl (renamed; .json "
             "for one JSON document)"}
    doubts = [Doubt(d.code, d.message, hints[d.code]) for d in find_doubts(lines) if d.code in hints]
    refuse_doubts(file, doubts, list(accept))
    return [(None, entry["source"], None) for entry in lines.entries]


def utf8_lines(data: bytes) -> list[str]:
    """The lines of UTF-8 text, split on LF only (a CRLF's CR dropped; U+2028 or a form feed stays in its line,
    as the corpus reader keeps it), blank ones included; ValueError naming the line of the first byte that is not
    UTF-8."""
    if data[:2] == b"\x1f\x8b":  # (plain stdin is UTF-8 text only; --file - reads it as --source-file is read)
        raise ValueError("gzip-compressed (its first bytes say so), not text: use --file - (or zcat)")
    if b"\0" in data:  # (UTF-16, or not text at all)
        line = data[:data.index(b"\0")].count(b"\n") + 1
        raise ValueError(f"line {line} holds a NUL byte, which no text has: it looks like UTF-16 or a binary file; "
                         "give UTF-8 text (e.g. iconv -f utf-16 -t utf-8)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"line {line} is not valid UTF-8 (byte 0x{data[exc.start]:02x}): save the text as UTF-8, "
                         "e.g. iconv -f latin1 -t utf-8") from None
    lines = text.split("\n")
    if lines[-1] == "":  # (the newline that ends the last line)
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _as_utf8(text: str) -> str:
    """An argument read as UTF-8 where the locale did not (LC_ALL=C with Python's UTF-8 mode off: its bytes are then
    escapes), as it is otherwise."""
    if _surrogate_at(text) is None:
        return text
    try:
        return os.fsencode(text).decode("utf-8")
    except UnicodeError:  # (not UTF-8: refused, saying where)
        return text


def _surrogate_at(text: str) -> int | None:
    return next((i for i, char in enumerate(text) if "\ud800" <= char <= "\udfff"), None)
