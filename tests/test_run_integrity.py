"""`mt-eval run` against misbehaving methods: every entry keeps its own result, every failure is visible,
nothing hangs (issue cases 10.2–10.5, 10.7–10.9, 10.11).

The reverse fixture (tests/fixtures/reverse) raises, exits, blocks its event loop or hangs on the sources
that ask it to, identically in Python and Node; each case runs it in-process, as a Node guest and isolated.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.runcard import RunCard

HERE = Path(__file__).parent
MISBEHAVING = HERE / "fixtures" / "reverse"
SCRIPTED = HERE / "fixtures" / "methods"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
SOURCES = ["one", "two", "three", "four", "five", "six", "seven", "eight"]


def corpus(tmp_path: Path, sources: list[str], name: str = "corpus.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": s[::-1]}) + "\n"
                            for i, s in enumerate(sources)))
    return path


def node_only(tmp_path: Path) -> Path:
    """The reverse fixture with only its Node entry (so it runs as a Node guest)."""
    plugin = tmp_path / "reverse-node"
    plugin.mkdir()
    shutil.copy(MISBEHAVING / "translate.js", plugin)
    manifest = json.loads((MISBEHAVING / "method.json").read_text())
    del manifest["entry_point"]
    (plugin / "method.json").write_text(json.dumps(manifest))
    return plugin


def run(tmp_path: Path, method: Path, sources: list[str], *args: str, out: str = "run"
        ) -> tuple[int, RunCard | None, str]:
    """`mt-eval run` in a child process: its exit status, its card and its stderr."""
    command = [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(method), "--corpus",
               str(corpus(tmp_path, sources)), "--pair", "eng>spa", "--out", str(tmp_path / out), "--quiet",
               "--resamples", "100", *LENIENT, "--latency-sample", "0", *args]  # about the run's integrity only
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    card_path = tmp_path / out / "card.json"
    card = msgspec.json.decode(card_path.read_bytes(), type=RunCard) if card_path.exists() else None
    return done.returncode, card, done.stderr


def predictions(card: RunCard) -> list[str | None]:
    return [r.predicted for r in card.results]


def expected(sources: list[str], failing: int) -> list[str | None]:
    return [None if i == failing else f"spa:{s[::-1]}" for i, s in enumerate(sources)]


# ---- 10.2 one entry that raises fails alone --------------------------------------------------------

RUNTIMES = [pytest.param("python", id="in-process"), pytest.param("isolated", id="isolated"),
            pytest.param("node", id="node", marks=needs_node)]


def method_for(runtime: str, tmp_path: Path) -> tuple[Path, list[str]]:
    if runtime == "node":
        return node_only(tmp_path), []
    return MISBEHAVING, ["--isolate"] if runtime == "isolated" else []


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_an_entry_that_raises_fails_alone_not_its_batch(tmp_path: Path, runtime: str):
    method, extra = method_for(runtime, tmp_path)
    sources = [*SOURCES[:5], "!raise", *SOURCES[5:]]
    code, card, err = run(tmp_path, method, sources, "--batch-size", "8", "--retries", "1", *extra)
    assert card is not None, err
    assert predictions(card) == expected(sources, 5)
    assert "asked to raise" in (card.results[5].error or "")
    assert code == 3 and card.status == "partial" and card.errors == 1


# ---- 10.3 a Node guest that ends its process mid-batch ---------------------------------------------

@needs_node
def test_a_node_guest_exiting_mid_batch_loses_only_the_culprit(tmp_path: Path):
    sources = [*SOURCES[:3], "!exit", *SOURCES[3:], "!exit too", "nine", "ten"]
    code, card, err = run(tmp_path, node_only(tmp_path), sources, "--batch-size", "4", "--concurrency", "2")
    assert card is not None, err
    failing = {3, 9}
    assert [r.predicted is None for r in card.results] == [i in failing for i in range(len(sources))]
    for i in failing:
        assert "exited with code 3" in (card.results[i].error or "")
        assert "exiting on purpose" in (card.results[i].error or "")
    assert (card.method.guest_restarts or 0) >= 2  # restarted after each crash; no crash-loop budget spent
    assert code == 3


# ---- 10.4 a guest whose event loop is blocked is killed and replaced --------------------------------

@pytest.mark.parametrize("runtime", [pytest.param("isolated", id="python-guest"),
                                     pytest.param("node", id="node-guest", marks=needs_node)])
def test_a_guest_blocking_its_event_loop_is_replaced_and_later_entries_are_kept(tmp_path: Path, runtime: str):
    method, extra = method_for(runtime, tmp_path)
    sources = [*SOURCES[:3], "!block 60", *SOURCES[3:]]
    started = time.monotonic()
    code, card, err = run(tmp_path, method, sources, "--batch-size", "4", "--timeout", "0.5", "--retries", "0",
                          *extra)
    assert time.monotonic() - started < 60, "the run waited for the blocked call"
    assert card is not None, err
    assert predictions(card) == expected(sources, 3)
    assert "within 0.5 s" in (card.results[3].error or "") or "timed out" in (card.results[3].error or "")
    assert code == 3


# ---- 10.5 an in-process method blocking the harness's event loop -----------------------------------

def test_an_in_process_method_blocking_the_event_loop_is_moved_into_a_guest(tmp_path: Path):
    sources = [*SOURCES[:3], "!block 60", *SOURCES[3:]]
    started = time.monotonic()
    code, card, err = run(tmp_path, MISBEHAVING, sources, "--batch-size", "2", "--timeout", "0.5",
                          "--retries", "0")
    assert time.monotonic() - started < 60, "the run waited for the blocked call"
    assert card is not None, err
    assert "reverse blocked the event loop for" in err and "carrying on with it in its own process" in err
    assert "asyncio.to_thread" in err  # the fix
    assert predictions(card) == expected(sources, 3)
    assert card.method.runtime == "python (isolated): it blocked the event loop in-process"
    assert code == 3


def test_calls_in_flight_that_each_block_the_loop_are_all_interrupted_and_the_run_carries_on(tmp_path: Path):
    """With two calls in flight, the second blocks the loop before it can turn after the first was interrupted: it
    is interrupted in turn (it had been taken for a block that could not be, and the run ended)."""
    sources = [*SOURCES[:2], "!block 60", "!block 60", *SOURCES[2:4]]
    started = time.monotonic()
    code, card, err = run(tmp_path, MISBEHAVING, sources, "--batch-size", "1", "--concurrency", "2", "--timeout",
                          "0.5", "--retries", "0")
    assert time.monotonic() - started < 90, "the run waited for the blocked calls"
    assert card is not None, err
    assert "could not be interrupted" not in err and "carrying on with it in its own process" in err
    assert predictions(card) == [None if s.startswith("!block") else f"spa:{s[::-1]}" for s in sources]
    assert code == 3  # (partial: the two that block failed)


def test_a_block_that_cannot_be_interrupted_ends_the_run_with_the_fix_not_a_hang(tmp_path: Path):
    started = time.monotonic()
    code, card, err = run(tmp_path, SCRIPTED, SOURCES[:2], "--batch-size", "1", "--timeout", "0.2",
                          "--param", "deaf_sleep_s=120")
    assert time.monotonic() - started < 60
    assert code == 1 and card is None  # the run could not continue: not 4, which says a card was written
    assert "blocked the event loop and could not be interrupted; finished entries are saved" in err
    assert "--resume --isolate" in err
    code, card, err = run(tmp_path, SCRIPTED, SOURCES[:2], "--batch-size", "1", "--timeout", "0.2",
                          "--param", "deaf_sleep_s=120", "--resume", "--isolate")  # as the message says
    assert code == 4 and card is not None, err  # every entry blocks: each failed, and the card says so


# ---- 10.7 --resume after a crash in the middle of writing results.jsonl ----------------------------

@pytest.mark.parametrize("tail", [b'{"id": "e3", "predicted": "ee', b"\0" * 300, b'{"id": "e3"\n\0\0\0\0'],
                         ids=["torn", "nul-filled", "torn-then-nul"])
def test_resume_truncates_a_torn_last_line_and_finishes(tmp_path: Path, tail: bytes):
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES)
    assert code == 0 and card is not None, err
    log = tmp_path / "run" / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]) + tail)  # three complete records, then what a crash left
    (tmp_path / "run" / "card.json").unlink()
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, "--resume")
    assert code == 0 and card is not None, err
    assert "dropped a torn last line" in err
    assert predictions(card) == expected(SOURCES, -1)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == [f"e{i}" for i in range(len(SOURCES))]  # each once
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, "--resume")  # and every later resume works (complete:
    assert code == 0 and card is not None and card.sessions == 2, err  # nothing to do, the card left as it was)


def test_resume_repairs_a_log_an_older_version_appended_after_a_fragment(tmp_path: Path):
    code, _, _ = run(tmp_path, MISBEHAVING, SOURCES)
    log = tmp_path / "run" / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    # a fragment, then records appended right after it (on its line and after), and one entry twice
    log.write_bytes(lines[0] + lines[1][:20] + lines[2] + lines[3] + lines[3] + lines[4])
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, "--resume")
    assert code == 0 and card is not None, err
    assert "dropped 1 damaged line(s) (line 2)" in err
    assert "1 entry (e3) was recorded more than once" in err
    assert predictions(card) == expected(SOURCES, -1)
    assert len(log.read_text().splitlines()) == len(SOURCES)


def test_resume_drops_results_for_ids_that_are_no_entry_of_the_run(tmp_path: Path):
    code, _, _ = run(tmp_path, MISBEHAVING, SOURCES, "--embed-results", "never")
    log = tmp_path / "run" / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    ghost = lines[0].replace(b'"id":"e0"', b'"id":"ghost"')
    assert ghost != lines[0]
    log.write_bytes(b"".join(lines[:4]) + ghost)  # four results, then one for no entry of the corpus
    (tmp_path / "run" / "card.json").unlink()
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, "--resume", "--embed-results", "never")
    assert code == 0 and card is not None, err
    assert "dropped results for 1 entry (ghost) that is no entry of this run" in err
    assert sorted(json.loads(line)["id"] for line in log.read_text().splitlines()) == [f"e{i}" for i in range(8)]
    assert main(["verify", str(tmp_path / "run"), "--quiet"]) == 0  # the log and the card agree


# ---- 10.8 exit statuses, --max-errors, the failure summary, the card's status ----------------------

def test_exit_statuses_max_errors_and_the_failure_summary(tmp_path: Path):
    fail = ["!raise"] * 2
    sources = [*SOURCES, *fail, "!hang"]
    code, card, err = run(tmp_path, MISBEHAVING, sources, "--timeout", "0.3", "--retries", "0", out="partial")
    assert code == 3 and card is not None
    assert card.status == "partial" and card.errors == 3 and card.metrics is not None
    assert [(f.message, f.count, f.example_id) for f in card.failures or []] == [
        ("the method failed: RuntimeError: asked to raise", 2, "e8"),
        ("timed out after 0.3 s (0.3 s per entry)", 1, "e10")]
    assert "3 of 11 entries failed (2 distinct errors):" in err
    assert "  2 × the method failed: RuntimeError: asked to raise  (e.g. e8)" in err
    assert "  1 × timed out after 0.3 s (0.3 s per entry)  (e.g. e10)" in err
    assert "status: partial: 3 of 11 entries failed, over --max-errors 0 (exit status 3)" in err
    assert run(tmp_path, MISBEHAVING, sources, "--timeout", "0.3", "--max-errors", "3", out="n")[0] == 0
    assert run(tmp_path, MISBEHAVING, sources, "--timeout", "0.3", "--max-errors", "2", out="n2")[0] == 3
    assert run(tmp_path, MISBEHAVING, sources, "--timeout", "0.3", "--max-errors", "30%", out="p")[0] == 0
    assert run(tmp_path, MISBEHAVING, sources, "--timeout", "0.3", "--max-errors", "25%", out="p2")[0] == 3
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, out="complete")
    assert code == 0 and card is not None and card.status == "complete" and card.failures == []
    assert "failed" not in err


def test_a_share_of_max_errors_tolerates_exactly_that_share_of_the_entries(tmp_path: Path):
    sources = [*["fine"] * 306, *["!raise"] * 69]  # 69 of 375 entries: 18.4% (18.4 * 375 is 6899.999… in binary)
    code, card, err = run(tmp_path, MISBEHAVING, sources, "--retries", "0", "--batch-size", "64",
                          "--max-errors", "18.4%")
    assert card is not None and card.errors == 69
    assert "status: partial: 69 of 375 entries failed, within --max-errors 18.4% (exit status 0)" in err
    assert code == 0


def test_a_run_where_every_entry_failed_has_no_headline_score(tmp_path: Path):
    code, card, err = run(tmp_path, MISBEHAVING, ["!raise one", "!raise two"], "--max-errors", "100%")
    assert code == 4 and card is not None
    assert card.status == "failed" and card.metrics is None
    assert "status: failed: none of the 2 entries was translated; no scores (exit status 4)" in err
    assert "chrF++" not in err


def test_max_errors_is_checked_before_anything_runs(tmp_path: Path):
    code, card, err = run(tmp_path, MISBEHAVING, SOURCES, "--max-errors", "lots")
    assert code == 2 and card is None  # a usage error, with the usage
    assert "argument --max-errors: must be a number of entries (5) or a share of the entries run (2.5%), got 'lots'" \
        in err


# ---- 10.9 a guest that cannot start fails the run once, at once ------------------------------------

def node_plugin(tmp_path: Path, files: dict[str, str], entry: str | None = None,
                package: dict[str, str] | None = None) -> Path:
    entry = entry or next(name for name in files if name.startswith("translate."))
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    for name, text in files.items():
        (plugin / name).write_text(text)
    (plugin / "method.json").write_text(json.dumps({"name": "Plugin", "node_entry": entry, "dependencies": []}))
    if package is not None:
        (plugin / "package.json").write_text(json.dumps(package))
    return plugin


ESM = "export async function translate(entries) {\n  return entries.map((e) => ({ id: e.id, predicted: 'esm' }));\n}\n"
CJS = ("const suffix = require('./suffix.js');\nmodule.exports = { async translate(entries) {\n"
       "  return entries.map((e) => ({ id: e.id, predicted: 'cjs' + suffix }));\n} };\n")
CJS_CJS = CJS.replace("./suffix.js", "./suffix.cjs")
START_FAILURES = [
    pytest.param({"translate.js": "export async function translate(entries) {\n  return [\n    1 +;\n}\n"}, None,
                 ["cannot start", "translate.js:3: SyntaxError: Unexpected token ';'", "1 +;",
                  "fix: correct the syntax"],
                 id="syntax-error"),
    pytest.param({"translate.js": "export const name = 'x';\n"}, {"type": "module"},
                 ["does not export translate (it exports name)", "export async function translate"],
                 id="missing-export"),
    pytest.param({"translate.js": CJS, "suffix.js": "module.exports = '!';\n"}, {"type": "module"},
                 ["translate.js:1: translate.js is CommonJS", 'has "type": "module"',
                  "rename it to translate.cjs (and node_entry in method.json)"], id="commonjs-in-a-module-package"),
    pytest.param({"translate.cjs": CJS, "suffix.js": "module.exports = '!';\n"}, {"type": "module"},
                 ["suffix.js:1: suffix.js is CommonJS", "rename it to suffix.cjs, or write it as an ES module"],
                 id="commonjs-helper-in-a-module-package"),
    pytest.param({"translate.js": ESM}, {"type": "commonjs"},
                 ["SyntaxError: Unexpected token 'export'", "rename it to translate.mjs"],
                 id="es-module-in-a-commonjs-package"),
]


@needs_node
@pytest.mark.parametrize(("files", "package", "expected_text"), START_FAILURES)
def test_a_node_method_that_cannot_load_fails_the_run_once_with_the_fix(tmp_path: Path, files, package,
                                                                      expected_text):
    started = time.monotonic()
    code, card, err = run(tmp_path, node_plugin(tmp_path, files, package=package), SOURCES * 4)
    assert time.monotonic() - started < 20
    assert code == 1 and card is None
    for text in expected_text:
        assert text in err, err
    assert err.count("cannot start") == 1  # once, not once per entry
    assert not (tmp_path / "run" / "results.jsonl").exists() or not (tmp_path / "run" / "results.jsonl").read_text()


@needs_node
@pytest.mark.parametrize(("files", "entry", "package", "predicted"), [
    pytest.param({"translate.mjs": ESM}, "translate.mjs", None, "esm", id="esm-mjs"),
    pytest.param({"translate.js": ESM}, "translate.js", {"type": "module"}, "esm", id="esm-in-module-package"),
    pytest.param({"translate.js": ESM}, "translate.js", None, "esm", id="esm-without-package-type"),
    pytest.param({"translate.cjs": CJS_CJS, "suffix.cjs": "module.exports = '!';\n"}, "translate.cjs",
                 {"type": "module"}, "cjs!", id="cjs-cjs"),
    pytest.param({"translate.js": CJS, "suffix.js": "module.exports = '?';\n"}, "translate.js", None, "cjs?",
                 id="cjs-without-package-type"),
])
def test_es_module_and_commonjs_methods_both_run(tmp_path: Path, files, entry, package, predicted):
    code, card, err = run(tmp_path, node_plugin(tmp_path, files, entry=entry, package=package), SOURCES[:3])
    assert code == 0 and card is not None, err
    assert predictions(card) == [predicted] * 3


def test_a_guest_that_never_answers_initialize_fails_the_run_once(tmp_path: Path, capsys):
    plugin = tmp_path / "silent"
    plugin.mkdir()
    (plugin / "guest.py").write_text("import sys, time\nsys.stderr.write('loading a huge model...\\n')\n"
                                     "sys.stderr.flush()\ntime.sleep(600)\n")
    (plugin / "method.json").write_text(json.dumps({"name": "Silent", "command": [sys.executable, "guest.py"],
                                                    "dependencies": []}))
    started = time.monotonic()
    code = main(["run", "--method", str(plugin), "--corpus", str(corpus(tmp_path, SOURCES * 4)), "--pair",
                 "eng>spa", "--out", str(tmp_path / "run"), "--quiet", "--start-timeout", "0.5"])
    err = capsys.readouterr().err
    assert time.monotonic() - started < 10
    assert code == 1
    assert "silent cannot start: guest silent did not answer initialize within 0.5 s" in err
    assert "fix: if it loads a large model as it starts, give it longer with --start-timeout SECONDS" in err
    assert "loading a huge model..." in err  # the guest's stderr
    assert err.count("cannot start") == 1


# ---- 10.11 sys.exit in a method, a method.json nested 100,000 deep ----------------------------------

def test_sys_exit_inside_translate_fails_its_entry_with_one_line_naming_the_file(tmp_path: Path):
    sources = [*SOURCES[:4], "!exit", *SOURCES[4:]]
    code, card, err = run(tmp_path, MISBEHAVING, sources, "--retries", "0")
    assert code == 3 and card is not None
    assert card.results[4].error == ("the method called sys.exit(3) (pipeline.py:30): a method must not end the "
                                     "process; raise an exception instead")
    assert predictions(card) == expected(sources, 4)
    assert "Traceback" not in err


def test_sys_exit_while_loading_is_one_line_naming_the_file(tmp_path: Path, make_plugin):
    plugin = make_plugin(files={"pipeline.py": "import sys\nsys.exit('no GPU here')\n"})
    code, card, err = run(tmp_path, plugin, SOURCES)
    assert code == 1 and card is None
    assert "importing \"pipeline\" called sys.exit('no GPU here') (pipeline.py:2)" in err
    assert "fix: a plugin must not end the process" in err
    assert "Traceback" not in err


def test_a_method_json_nested_100000_deep_is_one_line_naming_the_file(tmp_path: Path):
    plugin = tmp_path / "deep"
    plugin.mkdir()
    (plugin / "method.json").write_text('{"name": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, card, err = run(tmp_path, plugin, SOURCES)
    assert code == 1 and card is None
    assert f"{plugin / 'method.json'}: arrays and objects nested 100,001 levels deep: too deep to read" in err
    assert "RecursionError" not in err and "Traceback" not in err
