"""A method's start has a limit of its own (--start-timeout), apart from --timeout; validate holds a Python entry's
import to it; ``mt-eval serve`` refuses a closed standard output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mt_eval.cli import build_parser
from process_support import marked_environment, processes_marked

REPO = Path(__file__).resolve().parent.parent
STARTS_METHODS = [["run", "--demo"], ["translate", "DIR"], ["decide", "run", "--method", "M", "--corpus", "C"],
                  ["grade", "CARD", "--grader", "G"], ["locales"], ["validate", "DIR"]]


def mt_eval(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO, **kwargs)


@pytest.mark.parametrize("words", STARTS_METHODS, ids=lambda words: " ".join(words[:2]))
def test_every_command_that_starts_methods_takes_a_start_timeout(words):
    parser = build_parser(words)
    assert parser.parse_args([*words, "--start-timeout", "90"]).start_timeout == 90
    assert parser.parse_args(words).start_timeout == 30


def test_translate_gives_a_guest_that_never_answers_the_start_timeout_not_30_s_and_names_it(tmp_path: Path):
    plugin = tmp_path / "silent"
    plugin.mkdir()
    (plugin / "method.json").write_text(json.dumps({"name": "Silent", "command": [sys.executable, "-c",
                                                   "import time; time.sleep(600)"], "supported_pairs": ["eng>spa"],
                                                   "dependencies": []}))
    started = time.monotonic()
    done = mt_eval("translate", "--timeout", "5", "--start-timeout", "1", str(plugin), "Hello.")
    assert time.monotonic() - started < 20  # (before: the host's 30 s, whatever the options said)
    assert done.returncode == 1, done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("[error] guest silent did not answer initialize within 1 s"), line
    assert "fix: if it loads a large model as it starts, give it longer with --start-timeout SECONDS" in line


def test_validate_without_the_sandbox_stops_an_import_that_never_ends(make_plugin):
    plugin = make_plugin(files={"pipeline.py": "import time\ntime.sleep(10**6)\n"})
    marker, environment = marked_environment()
    started = time.monotonic()
    done = mt_eval("validate", "--no-sandbox", "--no-scan", "--start-timeout", "1", str(plugin), env=environment)
    assert time.monotonic() - started < 30  # (before: for ever, a notice every 10 s)
    assert done.returncode == 1, done.stderr
    assert ("importing pipeline.py did not finish within 1 s: it was still running pipeline.py:2 "
            "(time.sleep(10**6))") in done.stdout, done.stdout
    assert "give validate a longer --start-timeout" in done.stdout
    assert processes_marked(marker) == []


def test_validate_stops_a_constructor_that_never_ends(make_plugin):
    from mt_eval.validate import validate_plugin

    plugin = make_plugin(files={"pipeline.py": "import time\nclass EchoMethod:\n    def __init__(self):\n"
                                               "        time.sleep(10**6)\n"})
    [problem] = validate_plugin(plugin, scan=False, start_timeout_s=0.5).errors
    assert problem.message == ("building the method (pipeline:EchoMethod) did not finish within 0.5 s: it was still "
                               "running pipeline.py:4 (time.sleep(10**6))")
    assert problem.hint is not None and problem.hint.startswith("do not do long work in the constructor")


def test_serve_with_its_standard_output_closed_says_so_and_fails():
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "serve", "examples/lexicon-eng-spa"],
                          stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 2, done.stderr  # (before: 0, and not a word)
    assert done.stderr.startswith("mt-eval serve: standard output is closed: mt-eval serve answers the host on it"), \
        done.stderr
