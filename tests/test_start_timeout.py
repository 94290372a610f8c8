"""A method's start has a limit of its own (--start-timeout), apart from --timeout; validate holds a Python entry's
import to it; a guest still starting at it says how to give it longer, from the command line or from Python, first or
restarted; ``mt-eval serve`` refuses a closed standard output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mt_eval.bridge.messages import BridgeError
from mt_eval.cli import build_parser, main
from mt_eval.loader import GUEST_START_TIMEOUT, LoadedMethod, load_method
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
    assert done.stdout == ""  # (said once, on stderr, not as each line's error)
    assert done.stderr.startswith("mt-eval translate: silent cannot start: guest silent did not answer initialize "
                                  "within 1 s"), done.stderr
    assert "fix: if it loads a large model as it starts, give it longer with --start-timeout SECONDS" in done.stderr


FROM_PYTHON_FIX = ("fix: if it loads a large model as it starts, give it longer with "
                   "mt_eval.loader.GUEST_START_TIMEOUT.set(SECONDS) before load_method; else make ")
CONFIG = {"source_lang": "eng", "target_lang": "spa"}
# Starts once: answers initialize and exits on its first translate; started again, it never answers initialize.
STARTS_ONCE = """
import json, os, sys, time
if os.path.exists(sys.argv[1]):
    print("loading a huge model...", file=sys.stderr, flush=True)
    time.sleep(600)
open(sys.argv[1], "w").close()
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:  # (a notification)
        continue
    if request["method"] == "translate":
        os._exit(3)
    answer = {"protocol_version": "mt-eval-bridge/1", "method": {"name": "once", "method_id": "once"},
              "capabilities": {}} if request["method"] == "initialize" else None
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}), flush=True)
"""


def loaded_within(seconds: float, plugin: Path) -> LoadedMethod:
    """``load_method(plugin)`` with its guest's start timeout set from Python, as the fix says."""
    limit = GUEST_START_TIMEOUT.set(seconds)
    try:
        return load_method(plugin)
    finally:
        GUEST_START_TIMEOUT.reset(limit)


def starts_once(make_plugin, tmp_path: Path) -> Path:
    return make_plugin({"name": "Once", "command": [sys.executable, "guest.py", str(tmp_path / "started")],
                        "dependencies": []}, files={"guest.py": STARTS_ONCE}, name="once")


async def test_the_python_api_says_how_to_give_a_guest_still_starting_longer(make_plugin):
    plugin = make_plugin({"name": "Silent", "command": [sys.executable, "-c", "import time; time.sleep(600)"],
                          "dependencies": []}, name="silent")
    loaded = loaded_within(0.5, plugin)
    try:
        [result] = await loaded.method.translate([{"id": "a", "source": "Hello."}], CONFIG)
        assert result["error"].startswith("guest silent did not answer initialize within 0.5 s"), result
        fix = f"; {FROM_PYTHON_FIX}{sys.executable} -c import time; time.sleep(600) answer initialize as soon as"
        assert fix in result["error"], result  # (the command, as method.json gives it)
        with pytest.raises(BridgeError) as raised:  # (before: the bridge's words alone, with no fix)
            await loaded.method.start(CONFIG)
        assert f"\n  {FROM_PYTHON_FIX}" in str(raised.value)
    finally:
        await loaded.method.aclose()


async def test_the_python_api_says_how_to_give_a_restarted_guest_still_starting_longer(make_plugin, tmp_path: Path):
    loaded = loaded_within(0.5, starts_once(make_plugin, tmp_path))
    try:
        results = await loaded.method.translate([{"id": "a", "source": "one"}, {"id": "b", "source": "two"}], CONFIG)
        for result in results:  # each sent again alone, to a guest restarted that never answers initialize
            assert result["error"].startswith("guest once did not answer initialize within 0.5 s"), result
            assert f"; {FROM_PYTHON_FIX}{sys.executable} guest.py" in result["error"], result
            assert "loading a huge model..." in result["error"]
    finally:
        await loaded.method.aclose()


def test_a_run_whose_guest_is_restarted_and_still_starting_names_the_start_timeout(make_plugin, tmp_path: Path):
    plugin = starts_once(make_plugin, tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": s[::-1]}) + "\n"
                              for i, s in enumerate(["one", "two"])))
    status = main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "eng>spa", "--out",
                   str(tmp_path / "run"), "--quiet", "--start-timeout", "0.5", "--batch-size", "2"])
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert errors and all("did not answer initialize within 0.5 s" in error for error in errors), (status, errors)
    assert all("; fix: if it loads a large model as it starts, give it longer with --start-timeout SECONDS" in error
               for error in errors), errors


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
