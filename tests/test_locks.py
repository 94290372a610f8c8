"""Two processes, one run directory or one champollion project (issue 20), with real concurrent processes.

A run directory is held with flock(2); a champollion project with a Unix socket both Python and Node bind
(`mt_eval.locks`). Either lock disappears with its holder, SIGKILL included.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from champollion_project import make_project, pairs_config
from gate_policies import LENIENT
from mt_eval.harness.results_log import read_results
from mt_eval.harness.run_lock import hold_run_directory
from mt_eval.locks import Busy, RunDirectoryLock
from process_support import interrupted_while_waiting

HERE = Path(__file__).parent
REPO = HERE.parent
SCRIPTED = HERE / "fixtures" / "methods"
NODE_LOCALES = REPO / "bridge" / "node" / "bin" / "mt-eval-locales.js"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
BUSY = re.compile(r"is in use by pid (\d+) \((.+), started (\d{4}-\d\d-\d\dT[\d:]+\+00:00)\)")


def corpus(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"e{i}", "source": f"Sentence {i}.", "reference": f"Frase {i}."})
                            + "\n" for i in range(n)))
    return path


def run_command(tmp_path: Path, n: int, *extra: str, sleep_s: float = 0.05) -> list[str]:
    return [sys.executable, "-m", "mt_eval.cli", "run", "--method", str(SCRIPTED), "--corpus",
            str(corpus(tmp_path, n)), "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--batch-size", "1",
            "--concurrency", "2", "--resamples", "100", "--param", f"sleep_s={sleep_s}", *LENIENT,
            "--latency-sample", "0", *extra]


STARTED: list[subprocess.Popen[str]] = []


def start(command: list[str], **kwargs: object) -> subprocess.Popen[str]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    STARTED.append(process)
    return process


@pytest.fixture(autouse=True)
def _end_started_processes():
    """Whatever a test started is ended and its pipes closed, however the test ended."""
    yield
    while STARTED:
        with STARTED.pop() as process:
            if process.poll() is None:
                process.kill()
            process.communicate()


def wait_for_lines(path: Path, count: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never had {count} lines")


def logged_ids(tmp_path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]


# ---- run directories -----------------------------------------------------------------------------

def test_two_resumes_started_at_once_one_runs_the_other_refuses_at_once(tmp_path: Path):
    first = start(run_command(tmp_path, 40))
    wait_for_lines(tmp_path / "run" / "results.jsonl", 8)
    first.send_signal(signal.SIGINT)
    assert first.wait(30) == 130
    resumes = [start([*run_command(tmp_path, 40), "--resume"]) for _ in range(2)]
    outputs = [(process.wait(120), *process.communicate()) for process in resumes]
    codes = sorted(code for code, _, _ in outputs)
    assert codes == [0, 75], outputs
    refused = next(err for code, _, err in outputs if code == 75)
    winner = next(process for process, (code, _, _) in zip(resumes, outputs, strict=True) if code == 0)
    found = BUSY.search(refused)
    assert found and int(found.group(1)) == winner.pid, refused
    assert found.group(2).startswith("mt-eval run --method")
    assert "give --wait to wait" in refused
    ids = logged_ids(tmp_path)
    assert sorted(ids) == sorted(f"e{i}" for i in range(40))  # every entry once: 40 lines, not 40 + duplicates


def test_a_holder_killed_with_sigkill_frees_the_run_directory_at_once(tmp_path: Path):
    holder = start(run_command(tmp_path, 40))
    wait_for_lines(tmp_path / "run" / "results.jsonl", 5)
    second = subprocess.run([*run_command(tmp_path, 40), "--resume"], capture_output=True, text=True, timeout=60)
    assert second.returncode == 75 and f"is in use by pid {holder.pid}" in second.stderr
    holder.kill()  # SIGKILL: no cleanup of any kind runs
    holder.wait(10)
    started = time.monotonic()
    resumed = subprocess.run([*run_command(tmp_path, 40), "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "in use" not in resumed.stderr
    assert time.monotonic() - started < 60
    assert sorted(logged_ids(tmp_path)) == sorted(f"e{i}" for i in range(40))


def test_wait_waits_for_the_holder_then_continues(tmp_path: Path):
    holder = start(run_command(tmp_path, 30))
    wait_for_lines(tmp_path / "run" / "results.jsonl", 3)
    waiting = subprocess.run([*run_command(tmp_path, 30), "--resume", "--wait"], capture_output=True, text=True,
                             timeout=120)
    assert holder.wait(60) == 0
    assert waiting.returncode == 0, waiting.stderr
    assert f"is in use by pid {holder.pid}" in waiting.stderr and "waiting for it (--wait)" in waiting.stderr
    assert "is complete already: nothing to resume" in waiting.stdout  # (the holder finished it)
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert card["sessions"] == 1 and card["status"] == "complete"
    assert sorted(logged_ids(tmp_path)) == sorted(f"e{i}" for i in range(30))
    (tmp_path / "run" / "results.jsonl").unlink()
    # (slow enough to hold the directory while the next command starts, on a busy machine too)
    holder2 = start([*run_command(tmp_path, 30, sleep_s=0.3), "--force"])
    wait_for_lines(tmp_path / "run" / "results.jsonl", 2)  # it holds the directory
    bounded = subprocess.run([*run_command(tmp_path, 30), "--resume", "--wait", "0.3"], capture_output=True,
                             text=True, timeout=60)
    assert bounded.returncode == 75 and "waiting for it (--wait)" in bounded.stderr
    assert "Waited 0.3 s and it still holds it: wait for it to finish (or stop it), or give a longer --wait" in \
        bounded.stderr and "give --wait to wait" not in bounded.stderr
    holder2.wait(60)


def test_ctrl_c_while_waiting_says_the_directory_was_left_as_it_was(tmp_path: Path):
    holder = start(run_command(tmp_path, 30, sleep_s=0.3))
    wait_for_lines(tmp_path / "run" / "results.jsonl", 2)  # it holds the directory
    waiting = start([*run_command(tmp_path, 30), "--resume", "--wait"])
    stderr = interrupted_while_waiting(waiting)
    assert (f"interrupted before the run started: nothing was translated, and {tmp_path / 'run'} was left as it "
            "was") in stderr and "no run directory was written" not in stderr
    holder.send_signal(signal.SIGINT)
    assert holder.wait(60) == 130  # (the holder's own run is untouched: it stops on its own Ctrl-C)


@pytest.mark.parametrize(("wait_s", "fix"), [
    (None, "Wait for it to finish (or stop it), or give --wait to wait; a run directory is used by one process at a "
           "time"),
    (0.2, "Waited 0.2 s and it still holds it: wait for it to finish (or stop it), or give a longer --wait; a run "
          "directory is used by one process at a time")])
def test_a_refusal_says_whether_it_waited(tmp_path: Path, wait_s: float | None, fix: str):
    with RunDirectoryLock(tmp_path / "run", command="mt-eval run --first").acquire(), pytest.raises(Busy) as refused:
        hold_run_directory(tmp_path / "run", command="mt-eval run --second", wait_s=wait_s, prog="mt-eval run")
    assert refused.value.exit_status == 75
    assert refused.value.one_line() == f"run directory {tmp_path / 'run'} is in use by pid {os.getpid()} " \
                                       f"(mt-eval run --first, started {refused.value.holder['started_at']}). {fix}"


START_S = 8  # how long the slow method's constructor takes: a model being loaded


def slow_to_start(tmp_path: Path, plugin: Path, module: str, cls: str) -> tuple[Path, Path]:
    """A copy of ``plugin`` whose method's constructor notes each start in a file, then takes `START_S`."""
    copy = tmp_path / "slow-to-start"
    shutil.copytree(plugin, copy, ignore=shutil.ignore_patterns("__pycache__", "node_modules", "test"))
    starts = tmp_path / "starts"
    with (copy / f"{module}.py").open("a") as code:
        code.write(f"\n\nclass SlowToStart({cls}):\n    def __init__(self):\n        import time\n"
                   f"        with open({str(starts)!r}, 'a') as noted:\n            noted.write('started\\n')\n"
                   f"        time.sleep({START_S})\n        super().__init__()\n")
    manifest = json.loads((copy / "method.json").read_text())
    manifest.pop("node_entry", None)
    (copy / "method.json").write_text(json.dumps({**manifest, "entry_point": f"{module}:SlowToStart"}))
    return copy, starts


@pytest.mark.parametrize("command", ["run", "decide run"])
def test_a_directory_in_use_is_refused_before_the_method_is_loaded(tmp_path: Path, command: str):
    """Before: a second run (--resume, --force, or a plain one) read the corpus and loaded the method — a model,
    taking memory from the run holding the directory — and only then exited 75."""
    if command == "run":
        plugin, starts = slow_to_start(tmp_path, SCRIPTED, "behaviours", "Scripted")
        words = ["run", "--corpus", str(corpus(tmp_path, 4)), "--pair", "eng>spa", "--latency-sample", "0"]
    else:
        plugin, starts = slow_to_start(tmp_path, REPO / "examples" / "rules-grader", "grader", "RulesGrader")
        words = ["decide", "run", "--corpus", str(REPO / "examples" / "data" / "adequacy-decisions.jsonl")]
    out = tmp_path / "run"
    for again in ("--resume", "--force"):
        with RunDirectoryLock(out, command="mt-eval run --first").acquire():
            started = time.monotonic()
            refused = subprocess.run([sys.executable, "-m", "mt_eval.cli", *words, "--method", str(plugin), "--out",
                                      str(out), "--quiet", again], capture_output=True, text=True, timeout=120)
            took = time.monotonic() - started
        assert refused.returncode == 75, refused.stderr
        assert f"is in use by pid {os.getpid()} (mt-eval run --first" in refused.stderr
        assert not starts.exists(), "the method was loaded"
        assert took < START_S
    assert sorted(path.name for path in out.iterdir()) == [".lock"]
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", *words, "--method", str(plugin), "--out", str(out),
                           "--quiet", *(LENIENT if command == "run" else ())], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr  # (the lock taken early is the run's: not taken twice)
    assert starts.read_text() == "started\n"


def test_reading_and_comparing_cards_never_need_the_lock(tmp_path: Path):
    assert subprocess.run(run_command(tmp_path, 30), capture_output=True, timeout=120).returncode == 0
    card = tmp_path / "run" / "card.json"
    log = tmp_path / "run" / "results.jsonl"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:5]))  # entries lost: a resume redoes them
    holder = start([*run_command(tmp_path, 30), "--resume"])
    wait_for_lines(log, 6)  # it holds the directory and is appending
    try:
        compared = subprocess.run([sys.executable, "-m", "mt_eval.cli", "compare", str(card), str(card),
                                   "--trials", "200", "--bootstrap", "100", "--json"], capture_output=True, text=True,
                                  timeout=60)
        results = read_results(log)  # a reader, while the holder appends
        assert holder.poll() is None, "the holder finished too soon for this test"
    finally:
        assert holder.wait(60) == 0
    assert compared.returncode == 0, compared.stderr
    assert "in use" not in compared.stderr
    assert 5 < len(results) <= 30


def test_the_reader_keeps_the_first_result_of_an_entry_and_names_the_duplicates(tmp_path: Path, caplog):
    log = tmp_path / "results.jsonl"
    rows = [{"id": "a", "predicted": "1"}, {"id": "b", "predicted": "2"}, {"id": "a", "predicted": "3"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = read_results(log)
    assert {k: v.predicted for k, v in results.items()} == {"a": "1", "b": "2"}
    assert "records 1 entry (a) more than once; the first result of each is used" in caplog.text


# ---- champollion projects ------------------------------------------------------------------------

SOURCE = {"greeting": "Hello", "bye": "Goodbye", "thanks": "Thank you", "home": "Home"}


def locales_project(tmp_path: Path, plugin: str) -> object:
    return make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": plugin, "batchSize": 1}}),
                        {"locales/en/common.json": SOURCE})


def python_locales(project: object, *extra: str) -> list[str]:
    return [sys.executable, "-m", "mt_eval.cli", "locales", "--config", str(project.root), "--quiet", *extra]


def node_locales(project: object, *extra: str) -> list[str]:
    return ["node", str(NODE_LOCALES), "--config", str(project.root), "--quiet", *extra]


def fixture_env(project: object, sleep_s: float) -> dict[str, str]:
    mt_eval = Path(sys.executable).with_name("mt-eval")
    return {**os.environ, "CHAMPOLLION_FIXTURE_LOG": str(project.log), "CHAMPOLLION_FIXTURE_SLEEP": str(sleep_s),
            "MT_EVAL": str(mt_eval)}


def wait_for_calls(project: object, count: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len(project.calls()) >= count:
            return
        time.sleep(0.02)
    raise AssertionError("the holder never called its method")


@needs_node
@pytest.mark.parametrize(("holder_side", "plugin"), [("python", "rot13"), ("node", "upper")])
def test_python_and_node_runs_of_one_project_never_overlap(tmp_path: Path, holder_side: str, plugin: str):
    project = locales_project(tmp_path, plugin)
    env = fixture_env(project, 4)  # each call takes 4 s: the holder outlives the others' start
    holder_command = python_locales(project) if holder_side == "python" else node_locales(project)
    holder = start(holder_command, env=env)
    wait_for_calls(project, 1)
    others = [subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
              for command in (python_locales(project), node_locales(project))]
    assert holder.wait(60) == 0, holder.communicate()
    holder_name = "mt-eval locales" if holder_side == "python" else "mt-eval-locales"
    for other in others:
        assert other.returncode == 1, other.stderr
        found = BUSY.search(other.stderr)
        assert found and int(found.group(1)) == holder.pid and found.group(2) == holder_name, other.stderr
        assert "give --wait to wait" in other.stderr
    sent = [source for call in project.calls() for source in call["sources"]]
    assert sorted(sent) == sorted(SOURCE.values())  # each string sent once, by the holder alone
    assert set(project.json("locales/es/common.json")) == set(SOURCE)


@needs_node
@pytest.mark.parametrize(("holder_side", "plugin"), [("python", "rot13"), ("node", "upper")])
def test_a_project_holder_killed_with_sigkill_frees_the_project_at_once(tmp_path: Path, holder_side: str,
                                                                       plugin: str):
    project = locales_project(tmp_path, plugin)
    env = fixture_env(project, 5)
    holder = start(python_locales(project) if holder_side == "python" else node_locales(project), env=env,
                   start_new_session=True)
    wait_for_calls(project, 1)
    refused = subprocess.run(node_locales(project) if holder_side == "python" else python_locales(project),
                             capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode == 1 and f"in use by pid {holder.pid}" in refused.stderr
    os.killpg(holder.pid, signal.SIGKILL)  # the holder and whatever it started
    holder.wait(10)
    fast = {**env, "CHAMPOLLION_FIXTURE_SLEEP": "0"}
    for command in (python_locales(project), node_locales(project, "--force")):
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=fast)
        assert done.returncode == 0, done.stderr
        assert "in use" not in done.stderr
        assert time.monotonic() - started < 30
    assert set(project.json("locales/es/common.json")) == set(SOURCE)


def test_wait_on_a_project_waits_then_finds_nothing_left_to_send(tmp_path: Path):
    project = locales_project(tmp_path, "rot13")
    env = fixture_env(project, 2)
    holder = start(python_locales(project), env=env)
    wait_for_calls(project, 1)
    bounded = subprocess.run(python_locales(project, "--wait", "0.2"), capture_output=True, text=True, timeout=60,
                             env=env)
    assert bounded.returncode == 1 and "waiting for it (--wait)" in bounded.stderr
    assert "after waiting 0.2 s for it. Let it finish, then run again, or give a longer --wait" in bounded.stderr
    waiting = subprocess.run(python_locales(project, "--wait", "--json"), capture_output=True, text=True,
                             timeout=60, env=env)
    assert holder.wait(60) == 0
    assert waiting.returncode == 0, waiting.stderr
    assert "waiting for it (--wait)" in waiting.stderr
    assert json.loads(waiting.stdout)["locales"][0]["sent"] == 0  # the holder had done it all
    assert len(project.calls()) == len(SOURCE)  # batchSize 1: one call per string, all by the holder
    dry = subprocess.run(python_locales(project, "--dry-run"), capture_output=True, text=True, timeout=60, env=env)
    assert dry.returncode == 0  # a dry run writes nothing and needs no lock


def test_the_log_never_appends_an_entry_it_holds(tmp_path: Path, caplog):
    from mt_eval.harness.results_log import ResultsLog
    from mt_eval.records import TranslationResult

    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "a", "predicted": "first"}\n')  # what a resumed run finds
    log = ResultsLog(path, known={"a"})
    log.append([TranslationResult(id="a", predicted="again"), TranslationResult(id="b", predicted="new")])
    log.append([TranslationResult(id="b", predicted="twice")])
    log.close()
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["a", "b"]
    assert "not recording 1 entry (a) again" in caplog.text and "not recording 1 entry (b) again" in caplog.text


def test_a_decide_run_holding_the_directory_is_named_by_its_whole_command_line(tmp_path: Path):
    """Before: its lock said only ``mt-eval decide run``, not which decide run held the directory."""
    plugin, starts = slow_to_start(tmp_path, REPO / "examples" / "rules-grader", "grader", "RulesGrader")
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").touch()  # (as a run before it left it: the lock is taken before the method is loaded)
    words = [sys.executable, "-m", "mt_eval.cli", "decide", "run", "--method", str(plugin), "--corpus",
             str(REPO / "examples" / "data" / "adequacy-decisions.jsonl"), "--out", str(out), "--quiet"]
    holder = start(words)
    deadline = time.monotonic() + 60
    while not starts.exists() and time.monotonic() < deadline:  # (its constructor runs: the lock is held)
        time.sleep(0.02)
    refused = subprocess.run([*words, "--resume"], capture_output=True, text=True, timeout=120)
    holder.kill()
    holder.wait(10)
    assert refused.returncode == 75, refused.stderr
    found = BUSY.search(refused.stderr)
    assert found and int(found.group(1)) == holder.pid, refused.stderr
    assert found.group(2) == shlex.join(["mt-eval", *words[3:]])
