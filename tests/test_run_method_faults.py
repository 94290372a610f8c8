"""A method that misbehaves in a way the harness must survive — it calls sys.exit() in a latency call, raises
with text that is not valid Unicode, reports an infinite latency, fails or hangs in aclose(), or prints — fails
only its own entries with a clear message, and `mt-eval run` ends with a card that `--resume` can finish;
`mt-eval translate` the same. (A block beyond interruption: tests/test_run_integrity.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.harness.runcard import RunCard

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
SOURCES = ["Hi", "EXIT", "Bye"]
EXITS = """
import sys

class M:
    async def translate(self, entries, config):
        if any(e["source"] == "EXIT" for e in entries):
            sys.exit(5)
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]
"""


def plugin(tmp_path: Path, code: str, name: str = "faulty") -> Path:
    """A plugin whose pipeline.py is ``code`` (class M)."""
    directory = tmp_path / name
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({
        "name": name, "method_id": name, "entry_point": "pipeline:M", "supported_pairs": ["eng>spa"],
        "dependency_class": "S", "dependencies": []}))
    (directory / "pipeline.py").write_text(textwrap.dedent(code))
    return directory


def corpus(tmp_path: Path, sources: list[str] = SOURCES) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": "x" + s}) + "\n"
                            for i, s in enumerate(sources)))
    return path


def mt_eval(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def run(tmp_path: Path, method: Path, *args: str, out: str = "run"
        ) -> tuple[subprocess.CompletedProcess[str], RunCard | None]:
    """`mt-eval run` in a child process (latency calls over the whole corpus unless ``args`` say otherwise)."""
    done = mt_eval("run", "--method", str(method), "--corpus", str(corpus(tmp_path)), "--pair", "eng>spa",
                   "--out", str(tmp_path / out), "--quiet", "--resamples", "100", *LENIENT, "--retries", "0",
                   "--latency-warmup", "1", "--latency-repetitions", "1", *args)
    card_path = tmp_path / out / "card.json"
    card = msgspec.json.decode(card_path.read_bytes(), type=RunCard) if card_path.exists() else None
    return done, card


EXIT_ERROR = ("the method called sys.exit(5) (pipeline.py:7): a method must not end the process; raise an "
              "exception instead")


def test_sys_exit_in_a_latency_call_fails_the_call_and_its_entry_not_the_run(tmp_path: Path):
    done, card = run(tmp_path, plugin(tmp_path, EXITS), "--batch-size", "1")
    assert done.returncode == 3 and card is not None, done.stderr
    assert [r.error for r in card.results] == [None, EXIT_ERROR, None]
    assert card.latency.hot_failed == 1 and card.latency.hot_calls == 2
    assert "Traceback" not in done.stderr


def test_sys_exit_in_the_first_latency_call_is_its_cold_failure(tmp_path: Path):
    done, card = run(tmp_path, plugin(tmp_path, EXITS), "--batch-size", "1", "--ids", "e1,e2")
    assert done.returncode == 3 and card is not None, done.stderr
    assert card.latency.cold_failed == EXIT_ERROR


def test_translate_gives_a_sentence_whose_call_exits_the_same_error(tmp_path: Path):
    done = mt_eval("translate", str(plugin(tmp_path, EXITS)), "Hi", "EXIT", "Bye")
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["xHi", f"[error] {EXIT_ERROR}", "xBye"]
    assert "faulty: 1 of 3 entries failed" in done.stderr


# ---- text that is not valid Unicode in what a method says ------------------------------------------

RAISES_UNREADABLE = """
class M:
    async def translate(self, entries, config):
        if any(e["source"] == "EXIT" for e in entries):
            raise ValueError("cannot read " + b"caf\\xe9".decode("utf-8", "surrogateescape"))
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]
"""
THROWS_UNREADABLE = """
exports.translate = async (entries) => {
  if (entries.some((e) => e.source === 'EXIT')) throw new Error('cannot read caf\\udce9');
  return entries.map((e) => ({ id: e.id, predicted: 'x' + e.source }));
};
"""


def node_plugin(tmp_path: Path, code: str, name: str = "faulty") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({
        "name": name, "method_id": name, "node_entry": "translate.js", "supported_pairs": ["eng>spa"],
        "dependency_class": "S", "dependencies": []}))
    (directory / "translate.js").write_text(code)
    return directory


def test_writable_escapes_each_lone_surrogate_and_keeps_the_rest():
    from mt_eval.lone_surrogates import writable

    assert writable("caf\udce9, x\ud800 \U0001f600 é") == "caf\\udce9, x\\ud800 \U0001f600 é"
    assert writable("fine") == "fine"


@pytest.mark.parametrize(("runtime", "said"), [
    pytest.param("python", "the method failed: ValueError", id="in-process"),
    pytest.param("isolated", "the method failed: ValueError", id="isolated"),
    pytest.param("node", "the method failed: Error", id="node", marks=needs_node),
])
def test_an_exception_message_that_is_not_valid_unicode_is_written_escaped(tmp_path: Path, runtime, said):
    """(In the same words whichever runtime ran the method, in this process or as a guest.)"""
    method = node_plugin(tmp_path, THROWS_UNREADABLE) if runtime == "node" else plugin(tmp_path, RAISES_UNREADABLE)
    isolate = ["--isolate"] if runtime == "isolated" else []
    done, card = run(tmp_path, method, "--batch-size", "1", "--ids", "e1,e2", *isolate)
    assert done.returncode == 3 and card is not None, done.stderr
    assert [r.error for r in card.results] == [f"{said}: cannot read caf\\udce9", None]
    # (a guest's host makes the call's failure the entry's error result: the cold call failed as a result did)
    assert card.latency.cold_failed == (f"{said}: cannot read caf\\udce9" if runtime == "python" else
                                        "the result is an error")
    assert "Traceback" not in done.stderr


def test_translate_prints_such_a_message_escaped_whatever_the_encoding_of_its_output(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", str(plugin(tmp_path, RAISES_UNREADABLE)),
                           "Hi", "EXIT"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})  # strict: a lone surrogate cannot be written
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == ["xHi", "[error] the method failed: ValueError: cannot read caf\\udce9"]


def test_locales_reports_such_a_message_escaped(tmp_path: Path):
    project = tmp_path / "app"
    (project / "locales").mkdir(parents=True)
    (project / ".champollion" / "methods").mkdir(parents=True)
    plugin(project / ".champollion" / "methods", RAISES_UNREADABLE)
    (project / "champollion.config.json").write_text(json.dumps({
        "version": 3, "inputLocale": "en", "localesDir": "locales", "pairs": {"en:es": {"methodPlugin": "faulty"}}}))
    (project / "locales" / "en.json").write_text(json.dumps({"a": "Hi", "b": "EXIT"}))
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "locales", "--config", str(project)],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 1, done.stderr
    assert "failed b: the method failed: ValueError: cannot read caf\\udce9; left out of the file" in done.stdout
    assert json.loads((project / "locales" / "es.json").read_text()) == {"a": "xHi"}


# ---- a latency that is not a finite number ---------------------------------------------------------

INFINITE_LATENCY = """
class M:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "x" + e["source"],
                 "latency_s": float("inf") if e["source"] == "EXIT" else 0.1} for e in entries]
"""
INFINITE_LATENCY_JS = """
exports.translate = async (entries) => entries.map((e) => ({
  id: e.id, predicted: 'x' + e.source, latency_s: e.source === 'EXIT' ? Infinity : 0.1 }));
"""
NOT_FINITE = "the method returned an unusable result: $.latency_s: must be a finite number, got Infinity"


@pytest.mark.parametrize("runtime", ["python", pytest.param("node", marks=needs_node)])
def test_an_infinite_latency_fails_its_entry_at_once_and_the_run_ends_with_its_card(tmp_path: Path, runtime):
    method = node_plugin(tmp_path, INFINITE_LATENCY_JS) if runtime == "node" else plugin(tmp_path, INFINITE_LATENCY)
    done, card = run(tmp_path, method, "--latency-sample", "0")
    assert done.returncode == 3 and card is not None, done.stderr
    assert [r.error for r in card.results] == [None, NOT_FINITE, None]
    resumed, card = run(tmp_path, method, "--latency-sample", "0", "--resume")
    assert resumed.returncode == 3 and card is not None and card.sessions == 2, resumed.stderr
    assert "damaged" not in resumed.stderr


# ---- aclose() that raises or hangs -----------------------------------------------------------------

CLOSES_BADLY = """
import asyncio

class M:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]

    async def aclose(self):
        if config_of_close == "raise":
            raise RuntimeError("cannot close")
        await asyncio.sleep(100000)

config_of_close = "{how}"
"""


@pytest.mark.parametrize(("how", "warning"), [
    ("raise", "aclose() raised RuntimeError: cannot close (pipeline.py:10)"),
    ("hang", "aclose() did not return within 0.5 s"),
])
def test_an_aclose_that_raises_or_hangs_is_one_warning_and_the_run_writes_its_card(tmp_path: Path, monkeypatch,
                                                                                  capsys, how, warning):
    from mt_eval.cli import main

    monkeypatch.setattr("mt_eval.guarded_calls.CLOSE_TIMEOUT_S", 0.5)
    method = plugin(tmp_path, CLOSES_BADLY.replace("{how}", how))
    args = ["run", "--method", str(method), "--corpus", str(corpus(tmp_path)), "--pair", "eng>spa", "--out",
            str(tmp_path / "run"), "--quiet", "--resamples", "100", *LENIENT, "--latency-sample", "2"]
    for resume in ([], ["--resume"]):
        (tmp_path / "run" / "card.json").unlink(missing_ok=True)  # (its resume writes it: a complete one does not)
        assert main([*args, *resume]) == 0
        err = capsys.readouterr().err
        assert err.count(f"mt-eval run: warning: faulty's {warning}; carried on without it") == 1, err
        assert (tmp_path / "run" / "card.json").is_file() and (tmp_path / "run" / "predictions.txt").is_file()
    assert main(["translate", str(method), "Hi"]) == 0
    shown = capsys.readouterr()
    assert shown.out == "xHi\n"
    assert f"mt-eval translate: warning: faulty's {warning}; carried on without it" in shown.err


# ---- a method that prints ----------------------------------------------------------------------------

PRINTS = """
print("noise: import")

class M:
    def __init__(self):
        print("noise: constructor")

    async def translate(self, entries, config):
        print("noise: translate")
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]

    async def aclose(self):
        print("noise: aclose")
"""


def test_what_a_method_prints_goes_to_stderr_and_standard_output_keeps_only_the_result(tmp_path: Path, capsys):
    from mt_eval.cli import main

    method = plugin(tmp_path, PRINTS)
    assert main(["run", "--method", str(method), "--corpus", str(corpus(tmp_path)), "--pair", "eng>spa", "--out",
                 str(tmp_path / "run"), "--quiet", "--resamples", "100", *LENIENT, "--latency-sample", "1"]) == 0
    shown = capsys.readouterr()
    assert "noise" not in shown.out and shown.out.startswith("faulty on corpus (eng>spa): 3 entries, 0 errors")
    assert {line for line in shown.err.splitlines() if line.startswith("noise")} == {
        "noise: import", "noise: constructor", "noise: translate", "noise: aclose"}
    assert main(["translate", str(plugin(tmp_path, PRINTS, name="again")), "Hi", "Bye"]) == 0
    shown = capsys.readouterr()
    assert shown.out == "xHi\nxBye\n"
    assert "noise: translate" in shown.err and "noise: import" in shown.err
    print("after")  # standard output is standard output again
    assert capsys.readouterr().out == "after\n"


WRITES_TO_FD_1 = """
import os, subprocess, sys
os.write(1, b"fd noise: import\\n")

class M:
    async def translate(self, entries, config):
        subprocess.run([sys.executable, "-c", "print('fd noise: a program it runs')"], check=True)
        os.write(1, b"fd noise: translate\\n")
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]
"""


def test_what_a_method_or_a_program_it_runs_writes_to_fd_1_goes_to_stderr_too(tmp_path: Path):
    """Before, only sys.stdout was diverted: a tool the method ran broke --json and the run's summary."""
    method = plugin(tmp_path, WRITES_TO_FD_1)
    shown = mt_eval("translate", str(method), "Hi", "Bye", "--json")
    assert [json.loads(line)["predicted"] for line in shown.stdout.splitlines()] == ["xHi", "xBye"], shown.stdout
    assert {"fd noise: import", "fd noise: a program it runs", "fd noise: translate"} <= set(shown.stderr.splitlines())
    done = mt_eval("run", "--method", str(method), "--corpus", str(corpus(tmp_path)), "--pair", "eng>spa", "--out",
                   str(tmp_path / "run"), "--resamples", "100", *LENIENT, "--latency-sample", "1")
    assert done.returncode == 0 and "noise" not in done.stdout, done.stdout
    assert done.stdout.startswith("faulty on corpus (eng>spa): 3 entries, 0 errors")


def test_with_no_stderr_what_a_method_writes_to_fd_1_reaches_no_file_of_the_run(tmp_path: Path):
    """Started with fd 2 closed, the run's lock file took fd 2, and fd 1 was pointed at it: the method's output
    overwrote the lock's holder (a resume then said "in use by another process")."""
    where = tmp_path / "fd1.txt"
    method = plugin(tmp_path, WRITES_TO_FD_1.replace('        os.write(1, b"fd noise: translate\\n")', f"""\
        with open({str(where)!r}, "a") as seen:
            seen.write(os.readlink("/proc/self/fd/1") + "\\n")
        os.write(1, b"fd noise: translate\\n")"""))
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
                           str(corpus(tmp_path)), "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--resamples",
                           "100", *LENIENT, "--latency-sample", "1", "--quiet"], stdout=subprocess.PIPE, text=True,
                          timeout=120, preexec_fn=lambda: os.close(2))
    assert done.returncode == 0
    assert set(where.read_text().splitlines()) == {os.devnull}
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert b"fd noise" not in path.read_bytes(), path


LOGS_ITS_CALLS_AND_HANGS = """
import asyncio, json, os

class M:
    async def translate(self, entries, config):
        with open(os.environ["CALLS_LOG"], "a") as log:
            log.write(json.dumps([e["source"] for e in entries]) + "\\n")
        if any(e["source"] == "HANG" for e in entries):
            await asyncio.sleep(3600)
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries]
"""


def test_a_batch_that_times_out_is_sent_again_one_entry_at_a_time(tmp_path: Path, monkeypatch):
    # halves would wait out a deadline at every level (8 + 4 + 2 + 1 timeouts for one hanging entry); alone, each
    # entry but the hanging one answers at once (8 + 1)
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("CALLS_LOG", str(calls))
    sources = ["a", "b", "c", "d", "e", "HANG", "g", "h"]
    done = mt_eval("run", "--method", str(plugin(tmp_path, LOGS_ITS_CALLS_AND_HANGS)), "--corpus",
                   str(corpus(tmp_path, sources)), "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet",
                   "--resamples", "100", *LENIENT, "--retries", "0", "--latency-sample", "0", "--batch-size", "8",
                   "--timeout", "0.5")
    card = msgspec.json.decode((tmp_path / "run" / "card.json").read_bytes(), type=RunCard)
    assert done.returncode == 3, done.stderr
    assert [json.loads(line) for line in calls.read_text().splitlines()] == [sources, *([s] for s in sources)]
    assert [r.predicted for r in card.results] == ["x" + s if s != "HANG" else None for s in sources]
    assert card.results[5].error == "timed out after 0.5 s (0.5 s per entry)"


# ---- a result the method left out: the same words whichever runtime ran it ---------------------------------

DROPS_ONE = """
class M:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": "x" + e["source"]} for e in entries if e["source"] != "EXIT"]
"""
DROPS_ONE_JS = """
exports.translate = async (entries) => entries.filter((e) => e.source !== 'EXIT')
  .map((e) => ({ id: e.id, predicted: 'x' + e.source }));
"""


@pytest.mark.parametrize("runtime", [
    "python", "isolated", pytest.param("node", marks=needs_node)])
def test_an_entry_the_method_returned_no_result_for_is_worded_the_same_in_every_runtime(tmp_path: Path, runtime):
    """In this process, as a Python guest (--isolate) or a Node guest: 'the method', never the guest's name."""
    method = node_plugin(tmp_path, DROPS_ONE_JS) if runtime == "node" else plugin(tmp_path, DROPS_ONE)
    isolate = ["--isolate"] if runtime == "isolated" else []
    done, card = run(tmp_path, method, "--ids", "e0,e1", *isolate)
    assert done.returncode == 3 and card is not None, done.stderr
    assert [r.error for r in card.results] == [None, "the method returned no result for this entry"]
    shown = mt_eval("translate", str(method), "Hi", "EXIT")
    assert shown.stdout.splitlines() == ["xHi", "[error] the method returned no result for this entry"]


def test_a_run_started_without_stdout_ends_without_a_traceback(tmp_path: Path):
    """`mt-eval run ... >&-`: its summary had ended in AttributeError ('NoneType' object has no attribute 'write')."""
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--demo", "--out", str(tmp_path / "run"),
                           "--quiet"], stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "run" / "card.json").is_file()


def test_translate_started_without_stdin_reads_no_sentence_without_a_traceback():
    """`mt-eval translate DIR <&-` had ended in AttributeError ('NoneType' object has no attribute 'buffer')."""
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", "examples/lexicon-eng-spa"],
                          capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.close(0),
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
