"""What ``mt-eval translate`` prints as it goes: each line as soon as it and the lines before it are done, so
Ctrl-C or SIGTERM keeps what was printed and says how far it got; ``--timeout`` bounds a sentence; an ``aclose()``
that blocks the event loop holds nothing back and is cut off."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SLOW_BY_NUMBER = """\
import asyncio


class Slow:
    async def translate(self, entries, config):
        await asyncio.sleep(0.4 * int(entries[0]["source"]) if entries[0]["source"] != "hang" else 600)
        return [{"id": e["id"], "predicted": "ES " + e["source"]} for e in entries]
"""

BLOCKS_IN_ACLOSE = """\
import time


class Slow:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "ES " + e["source"]} for e in entries]

    async def aclose(self):
        time.sleep(600)
"""


def plugin(tmp_path: Path, code: str) -> Path:
    directory = tmp_path / "slow"
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({
        "name": "Slow", "method_id": "slow", "class": "custom-plugin", "entry_point": "pipeline:Slow",
        "supported_pairs": ["eng>spa"], "dependency_class": "S", "dependencies": []}))
    (directory / "pipeline.py").write_text(code)
    return directory


def translate(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "translate", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(("sig", "status", "by"), [(signal.SIGINT, 130, ""), (signal.SIGTERM, 143, " by SIGTERM")])
def test_a_stopped_translate_keeps_the_lines_it_printed_and_says_how_far_it_got(tmp_path: Path, sig, status, by):
    """Before: nothing was printed until every sentence was done, so Ctrl-C or SIGTERM lost all of them."""
    process = translate(str(plugin(tmp_path, SLOW_BY_NUMBER)), "1", "", "2", "hang", "3")
    assert process.stdout is not None
    first = [process.stdout.readline() for _ in range(3)]  # printed while the rest are still being translated
    assert first == ["ES 1\n", "\n", "ES 2\n"]
    process.send_signal(sig)
    out, err = process.communicate(timeout=30)
    assert process.returncode == status, err
    assert out == ""  # the line after "hang" waits for it, in order
    assert err.endswith(f"mt-eval translate: interrupted{by}; printed the first 3 of 5 lines (each translated, or why "
                        "not); translate the rest again\n")


def test_timeout_bounds_each_sentence(tmp_path: Path):
    started = time.monotonic()
    process = translate(str(plugin(tmp_path, SLOW_BY_NUMBER)), "--timeout", "1", "1", "hang")
    out, err = process.communicate(timeout=60)
    assert time.monotonic() - started < 20
    assert process.returncode == 1, err
    lines = out.splitlines()
    assert lines[0] == "ES 1" and lines[1].startswith("[error] timed out after 1 s"), out
    assert "slow: 1 of 2 entries failed" in err


def test_an_aclose_that_blocks_the_event_loop_is_cut_off_after_the_translations_are_printed(tmp_path: Path):
    """Before: a synchronous time.sleep() in aclose() held the translations back for as long as it slept, and
    the first SIGTERM could not stop it."""
    started = time.monotonic()
    process = translate(str(plugin(tmp_path, BLOCKS_IN_ACLOSE)), "hello", "world")
    assert process.stdout is not None
    assert [process.stdout.readline(), process.stdout.readline()] == ["ES hello\n", "ES world\n"]
    assert time.monotonic() - started < 8  # (before aclose() gave up its 10 s)
    rest, err = process.communicate(timeout=60)
    assert process.returncode == 0 and rest == "", err
    assert time.monotonic() - started < 25
    assert "slow's aclose() blocked the event loop for 10.0 s (a synchronous call: time.sleep, a blocking client) " \
           "and was interrupted; carried on without it" in err


def test_json_output_names_a_corpus_entry_by_its_own_id_and_a_line_by_its_number(tmp_path: Path):
    """Before: a corpus's entries were "1", "2", … (their positions), which match nothing in the corpus."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "greeting", "source": "1"}\n{"id": 7, "source": "2"}\n')
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(plugin(tmp_path, SLOW_BY_NUMBER)),
                           "1", "--file", str(corpus), "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [(r["id"], r["predicted"]) for r in map(json.loads, done.stdout.splitlines())] == [
        ("1", "ES 1"), ("greeting", "ES 1"), ("7", "ES 2")]


TELLS_ITS_PAIR = """\
class Slow:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": f"{config.target_lang}:{e['source']}:{sorted(e)}"} for e in entries]
"""


def test_a_corpus_entry_is_sent_as_a_run_sends_it_an_empty_source_and_a_negative_controls_own_pair_too(
        tmp_path: Path):
    """Before: a negative control's own pair was ignored (translated into the run's language, where a run asks for
    its own) and an entry with an empty source was printed as translated to "" without being sent."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "source": "Hi", "reference": "Hola"}\n'
                      '{"id": "empty", "source": "", "family": "negative"}\n'
                      '{"id": "deu", "source": "Hi", "family": "negative", "pair": "eng>deu"}\n'
                      '{"id": "b", "source": "Yes", "reference": "Sí"}\n')
    directory = str(plugin(tmp_path, TELLS_ITS_PAIR))
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", directory, "--file", str(corpus),
                           "--pair", "eng>spa", "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [(r["id"], r["predicted"]) for r in map(json.loads, done.stdout.splitlines())] == [
        ("a", "spa:Hi:['id', 'source']"), ("empty", "spa::['id', 'source']"), ("deu", "deu:Hi:['id', 'source']"),
        ("b", "spa:Yes:['id', 'source']")]
    lines = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", directory, "", "Hi"],
                           capture_output=True, text=True, timeout=60)
    assert lines.returncode == 0 and lines.stdout == "\nspa:Hi:['id', 'source']\n", lines.stderr  # (a blank TEXT)


@pytest.mark.parametrize("given", [[], ["--file", "-"]])
def test_sentences_typed_at_a_terminal_are_asked_for(tmp_path: Path, given: list[str]):
    """Before: with no sentence given, it waited on the terminal in silence, as if it hung."""
    import os
    import pty

    controller, terminal = pty.openpty()
    method = plugin(tmp_path, SLOW_BY_NUMBER)
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "translate", str(method), *given],
                               stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(terminal)
    os.write(controller, b"1\n\x04")  # a sentence, then Ctrl-D
    out, err = process.communicate(timeout=60)
    os.close(controller)
    assert process.returncode == 0, err
    assert out == "ES 1\n"
    assert err.startswith("mt-eval translate: type the sentences, one per line, then Ctrl-D to translate them")


RAISES_BASE_EXCEPTIONS = """\
import asyncio


class Odd(BaseException):
    pass


class Slow:
    async def translate(self, entries, config):
        if entries[0]["source"] == "odd":
            raise Odd("not an Exception")
        task = asyncio.ensure_future(asyncio.sleep(60))  # a task it awaits is cancelled by someone else
        asyncio.get_running_loop().call_later(0.05, task.cancel)
        await task
"""


def test_a_method_that_raises_cancelled_error_or_a_base_exception_fails_its_sentences_and_says_so(tmp_path: Path):
    """Before: a CancelledError from the method (a task it awaited was cancelled) printed nothing and exited 0, and
    a BaseException of its own ended in a traceback."""
    process = translate(str(plugin(tmp_path, RAISES_BASE_EXCEPTIONS)), "hello", "odd")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    assert out.splitlines() == [
        "[error] the method raised CancelledError, though nothing cancelled its call (a task or future it awaited "
        "was cancelled): catch it there, or raise another exception",
        "[error] the method failed: Odd: not an Exception"]
    assert "Traceback" not in err and "slow: 2 of 2 entries failed" in err


IGNORES_CTRL_C = """\
import asyncio
import shutil
import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)  # (as it is imported)


class Slow:
    async def translate(self, entries, config):
        await asyncio.sleep(600)
"""


def test_ctrl_c_stops_translate_though_the_plugin_ignored_it_as_it_was_imported(tmp_path: Path):
    """Before: the plugin's SIG_IGN stood, and Ctrl-C did nothing (killed after 30 s)."""
    process = translate(str(plugin(tmp_path, IGNORES_CTRL_C)), "Hello.")
    try:
        time.sleep(3)  # (loaded, and waiting in its call)
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "interrupted" in err


def test_file_dash_reads_standard_input_as_the_file_dev_stdin_is_read(tmp_path: Path):
    """Before: `--file -` looked for a file named "-" ("No such file or directory")."""
    import os

    method = str(plugin(tmp_path, SLOW_BY_NUMBER))

    def translated(given: str, piped: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", method, "--file", given, "--json"],
                              input=piped, capture_output=True, timeout=60)

    for piped in (b"0\n\n1\n", "0\n\n1\n".encode("utf-16")):  # (UTF-16 with its mark: read as a file is)
        dash, dev_stdin = translated("-", piped), translated("/dev/stdin", piped)
        assert dash.returncode == 0, dash.stderr
        assert [(r["id"], r["predicted"]) for r in map(json.loads, dash.stdout.splitlines())] == [
            ("1", "ES 0"), ("2", ""), ("3", "ES 1")]
        assert [json.loads(line)["predicted"] for line in dev_stdin.stdout.splitlines()] == ["ES 0", "", "ES 1"]
    empty = translated("-", b"")
    assert empty.returncode == 2 and empty.stderr.decode() == (
        "mt-eval translate: --file -: is empty (0 bytes); a source file has one sentence per line\n")
    columns = translated("-", b"Hello\tHola\n")  # (no file name to give renamed: stdin.tsv was said)
    assert columns.returncode == 2 and (b"; a TSV corpus from a pipe is read with mt-eval run's rules when named "
                                        b".tsv: save it as FILE.tsv and give --file FILE.tsv (or give its --columns); "
                                        in columns.stderr)
    helped = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", "--help"], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert "read the sentences from FILE, one per line (-: standard input)" in helped.stdout


def test_gzip_on_plain_standard_input_is_refused_naming_file_dash_which_reads_it(tmp_path: Path):
    """Before: plain standard input holding gzip was said to look "like UTF-16 or a binary file"."""
    import gzip

    method = str(plugin(tmp_path, SLOW_BY_NUMBER))
    packed = gzip.compress(b"0\n\n1\n")
    plain = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", method], input=packed,
                           capture_output=True, timeout=60)
    assert (plain.returncode, plain.stdout) == (2, b""), plain.stderr
    assert plain.stderr.decode() == ("mt-eval translate: standard input: gzip-compressed (its first bytes say so), "
                                     "not text: use --file - (or zcat)\n")
    dash = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", method, "--file", "-"], input=packed,
                          capture_output=True, timeout=60)
    assert (dash.returncode, dash.stdout) == (0, b"ES 0\n\nES 1\n"), dash.stderr


@pytest.mark.parametrize("command", ["translate", "serve"])
def test_a_plugin_that_cannot_load_is_said_in_the_command_s_own_name(tmp_path: Path, command: str):
    """Before, translate and serve said it bare ("cannot load method plugin …"), as no other failure of theirs."""
    broken = plugin(tmp_path, 'raise ImportError("boom")\n')
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", command, str(broken), *(["Hi"] * (command ==
                          "translate"))], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"mt-eval {command}: cannot load method plugin {broken}\n"), done.stderr
    assert 'importing "pipeline" failed: ImportError: boom (pipeline.py:1)' in done.stderr


STRAYS_PY = """\
class Strays:
    async def translate(self, entries, config):
        return [*({"id": e["id"], "predicted": e["source"].upper(), "foo": 1} for e in entries), {"id": "zzz"}]
"""
STRAYS_JS = """\
export async function translate(entries) {
  return [...entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase(), foo: 1 })), { id: 'zzz' }];
}
"""


@pytest.mark.parametrize("runtime", ["python", pytest.param("node", marks=pytest.mark.skipif(
    shutil.which("node") is None, reason="node is not installed"))])
def test_what_was_dropped_or_changed_of_a_methods_results_is_said_once_in_the_commands_name(tmp_path: Path,
                                                                                             runtime: str):
    """Before, a Node method's results matching no entry were said bare, once per call (three here), and what its
    host changed to accept them (a field moved into metadata) not at all."""
    directory = tmp_path / "strays"
    directory.mkdir()
    entry = {"python": {"entry_point": "pipeline:Strays"}, "node": {"node_entry": "translate.js"}}[runtime]
    (directory / "method.json").write_text(json.dumps({"name": "Strays", "method_id": "strays", **entry,
                                                       "supported_pairs": ["eng>spa"], "dependencies": []}))
    (directory / "pipeline.py").write_text(STRAYS_PY)
    (directory / "translate.js").write_text(STRAYS_JS)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(directory), "one", "two", "three"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "ONE\nTWO\nTHREE\n"), done.stderr
    assert done.stderr == (
        'mt-eval translate: strays: results accepted after changes: 3 × unknown field "foo" moved into metadata\n'
        'mt-eval translate: strays: the method returned results that match no entry it was sent (ids "zzz"); they '
        'were dropped (a result is {"id": entry["id"], "predicted": TEXT}, one per entry)\n')


def test_help_states_the_exit_statuses_as_the_other_commands_do():
    """Its exit statuses were a sentence of the description, not the ``exit status:`` paragraph after the examples."""
    shown = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", "--help"], capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0 and "Exit status:" not in shown.stdout
    assert shown.stdout.split("\n\nexit status: ")[1] == (
        "0 no sentence failed; 1 one did, the plugin cannot be loaded or its method cannot start, or standard\noutput "
        "cannot be written; 2 usage; 130 interrupted (the lines printed are kept); 141 the reader of\nstandard output "
        "went away\n")


ODD_MESSAGES = """\
class Slow:
    async def translate(self, entries, config):
        odd = "\\x1b[2J\\u202egone\\nnext"
        return [{"id": e["id"], "predicted": None, "error": odd} if e["source"] == "fail" else
                {"id": e["id"], "predicted": None, "abstained": True, "abstain_reason": odd} if e["source"] == "decline"
                else {"id": e["id"], "predicted": e["source"] + "\\u202e\\u200d"} for e in entries]
"""


def test_a_methods_error_and_reason_are_printed_escaped_on_their_line_and_a_translation_as_given(tmp_path: Path):
    """Before: a method's error or reason for declining reached the output raw (ESC cleared the screen), though run
    lists a method's errors escaped; a translation is the command's output and is printed as the method gave it."""
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(plugin(tmp_path, ODD_MESSAGES)),
                           "fail", "decline", "שלום"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == ["[error] \\x1b[2J\\u202egone next", "[declined] \\x1b[2J\\u202egone next",
                                        "שלום\u202e\u200d"]


CONTROLS = """\
class Slow:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "a\\x1b[2Jb\\tc\\x07d\\x85e\\u202ef\\U000e0041"} for e in entries]
"""
GIVEN = "a\x1b[2Jb\tc\x07d\x85e\u202ef\U000e0041"


def printed_on_a_terminal(*argv: str) -> bytes:
    """What ``mt-eval translate`` writes to a terminal (a pseudo-terminal in raw mode: no CR added to a line)."""
    import os
    import pty
    import tty

    controller, terminal = pty.openpty()
    tty.setraw(terminal)
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "translate", *argv], stdin=subprocess.DEVNULL,
                               stdout=terminal, stderr=subprocess.PIPE)
    os.close(terminal)
    printed = b""
    while True:
        try:
            chunk = os.read(controller, 1 << 16)
        except OSError:  # (EIO: the terminal's last writer is gone)
            break
        if not chunk:
            break
        printed += chunk
    _, err = process.communicate(timeout=60)
    os.close(controller)
    assert process.returncode == 0, err
    return printed


def test_a_translation_is_shown_escaped_on_a_terminal_and_written_as_given_to_a_pipe(tmp_path: Path):
    """Before: a method's ESC sequences, BEL, C1 controls and bidirectional overrides reached the terminal raw, so a
    method could clear or rewrite the screen and turn the text around."""
    method = str(plugin(tmp_path, CONTROLS))
    assert printed_on_a_terminal(method, "hi") == b"a\\x1b[2Jb\tc\\x07d\\x85e\\u202ef\\U000e0041\n"  # (the tab kept)
    [line] = printed_on_a_terminal(method, "hi", "--json").decode().splitlines()
    assert json.loads(line)["predicted"] == GIVEN and "\x1b" not in line and "\u202e" not in line
    piped = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", method, "hi"], capture_output=True,
                           timeout=60)
    assert piped.returncode == 0 and piped.stdout == (GIVEN + "\n").encode(), piped.stderr
    piped = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", method, "hi", "--json"],
                           capture_output=True, timeout=60)
    assert json.loads(piped.stdout)["predicted"] == GIVEN and "\u202e".encode() in piped.stdout
