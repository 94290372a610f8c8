"""A method that leaves a process or a thread running never keeps `mt-eval` from ending: the command ends its
left processes and does not wait for its left threads, saying so, and keeps its result and exit status."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gate_policies import LENIENT

LEAVES_THINGS_RUNNING = """
import os, subprocess, threading, time

GRANDPARENT = (
    "import subprocess, sys, time\\n"
    "grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\\n"
    "open(sys.argv[1], 'w').write(str(grandchild.pid))\\n"
    "time.sleep(600)\\n")

def forever():
    while True:
        time.sleep(0.2)

class M:
    def __init__(self):
        if os.environ.get("LEAVE_THREAD"):
            threading.Thread(target=forever, name="model-warmer").start()
        if os.environ.get("LEAVE_PROCESS"):  # a child that starts a grandchild, in a process group of its own or not
            child = subprocess.Popen([os.environ["PYTHON"], "-c", GRANDPARENT, os.environ["CHILD_PID"] + ".grand"],
                                     start_new_session=os.environ["LEAVE_PROCESS"] == "own-group")
            with open(os.environ["CHILD_PID"], "w") as f:
                f.write(str(child.pid))

    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


def _plugin(tmp_path: Path) -> Path:
    directory = tmp_path / "leaves"
    directory.mkdir()
    (directory / "method.json").write_text(json.dumps({"name": "Leaves", "entry_point": "pipeline:M",
                                                       "dependency_class": "S", "dependencies": []}))
    (directory / "pipeline.py").write_text(textwrap.dedent(LEAVES_THINGS_RUNNING))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": s, "reference": s.upper()}) + "\n"
                              for i, s in enumerate(["one", "two", "three"])))
    return directory


def _run(tmp_path: Path, **leave: str) -> tuple[subprocess.CompletedProcess[str], float]:
    plugin = _plugin(tmp_path)
    env = {**os.environ, "PYTHON": sys.executable, "CHILD_PID": str(tmp_path / "child.pid"), **leave}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(plugin), "--corpus",
                           str(tmp_path / "corpus.jsonl"), "--pair", "eng>spa", "--out", str(tmp_path / "run"),
                           "--quiet", "--resamples", "100", "--latency-sample", "0", *LENIENT],
                          capture_output=True, text=True, env=env, timeout=120)
    return done, time.monotonic() - started


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat[stat.rindex(")") + 2:].startswith("Z")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("group", ["same-group", "own-group"])
def test_a_process_the_method_left_running_is_ended_and_named(tmp_path: Path, group: str):
    done, _took = _run(tmp_path, LEAVE_PROCESS=group)
    pid = int((tmp_path / "child.pid").read_text())
    grandchild = int((tmp_path / "child.pid.grand").read_text())
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "card.json").exists()
    assert not _alive(pid) and not _alive(grandchild)  # it and what it started
    assert f"mt-eval run: warning: 1 process started in this command was still running at its end (pid {pid}: " \
           in done.stderr and "ended it (a method stops what it starts in aclose())" in done.stderr


def test_a_thread_the_method_left_running_does_not_hold_the_command(tmp_path: Path):
    done, took = _run(tmp_path, LEAVE_THREAD="1")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "card.json").exists() and "predictions" in done.stderr + done.stdout
    assert "1 thread started in this command ('model-warmer') still ran 5 s after its end; exited without " \
           "waiting for it" in done.stderr
    assert took < 60


def test_a_method_that_leaves_nothing_running_ends_without_a_warning(tmp_path: Path):
    done, _took = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr


def test_a_long_command_line_is_shown_shortened_and_said_to_be():
    """It was cut at 80 characters with nothing to say so: a plugin's path cut short named another directory."""
    from mt_eval.process_state import command_line

    long_argument = "x" * 200
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", long_argument])
    try:
        for _ in range(100):  # (until it has exec'd sleep)
            if (shown := command_line(child.pid)) and "time.sleep(30)" in shown:
                break
            time.sleep(0.01)
        assert shown is not None and len(shown) == 80 and shown.endswith("…") and shown.startswith(sys.executable)
        assert command_line(child.pid, limit=None) == f"{sys.executable} -c import time; time.sleep(30) {long_argument}"
    finally:
        child.kill()
        child.wait()
    assert command_line(child.pid) is None


def test_a_guest_of_mt_evals_own_host_left_by_a_second_ctrl_c_is_ended_without_blaming_the_method():
    """Before, `mt-eval run --isolate` stopped by two Ctrl-C's in a row named its own guest as a process the method
    had left running ("a method stops what it starts in aclose()")."""
    script = textwrap.dedent("""
        import subprocess, sys
        from mt_eval.cli.leftovers import leave
        from mt_eval.process_state import HOST_GUESTS
        guest = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(guest.pid, flush=True)
        HOST_GUESTS.add(guest.pid)
        leave(0, prog="mt-eval run")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr == ""
    pid = int(done.stdout)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()


def test_a_second_ctrl_c_raised_in_a_transport_callback_prints_no_traceback():
    """The loop's report of a KeyboardInterrupt raised inside a callback ("Fatal error on transport", with its
    traceback) is left out, alone or in a task group's exception group; other errors are still reported."""
    from mt_eval.event_loop import _quiet_on_interrupt

    reported = []

    class Loop:
        def default_exception_handler(self, context):
            reported.append(context["message"])

    _quiet_on_interrupt(Loop(), {"message": "Fatal error on transport", "exception": KeyboardInterrupt()})
    _quiet_on_interrupt(Loop(), {"message": "something else", "exception": ValueError("x")})
    _quiet_on_interrupt(Loop(), {"message": "a task group's", "exception": BaseExceptionGroup(
        "unhandled errors in a TaskGroup", [KeyboardInterrupt(), BaseExceptionGroup("inner", [SystemExit(1)])])})
    _quiet_on_interrupt(Loop(), {"message": "a group with an error", "exception": BaseExceptionGroup(
        "unhandled errors in a TaskGroup", [KeyboardInterrupt(), ValueError("x")])})
    assert reported == ["something else", "a group with an error"]


DAEMONISES = """
import subprocess

class M:
    def __init__(self):  # the daemon pattern: its parent (sh) exits, so it is nobody's child
        subprocess.run(["sh", "-c", "setsid sleep 600 < /dev/null > /dev/null 2>&1 &"], check=True)

    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": e["source"].upper()} for e in entries]
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is a Linux feature")
@pytest.mark.parametrize("command", ["translate", "serve"])
def test_a_process_the_method_daemonised_is_ended_and_named_too(tmp_path: Path, command: str):
    """Before: a process started by a child that then exited (fork, setsid) was reparented to init and ran on."""
    from process_support import marked_environment, processes_marked

    plugin = _plugin(tmp_path)
    (plugin / "pipeline.py").write_text(textwrap.dedent(DAEMONISES))
    marker, environment = marked_environment()
    argv = ["translate", str(plugin), "--pair", "eng:spa", "one"] if command == "translate" else ["serve", str(plugin)]
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", *argv], env=environment, input="", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "process started in this command was still running at its end" in done.stderr
    assert "sleep 600" in done.stderr
    assert processes_marked(marker) == []


DETACHES_AND_CRASHES = """
import json, subprocess, sys

def answer(message_id, result):
    print(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}), flush=True)

for line in sys.stdin:
    message = json.loads(line)
    if message["method"] == "initialize":
        answer(message["id"], {"protocol_version": "mt-eval-bridge/1", "method": {"name": "d", "method_id": "d"},
                               "card": None, "capabilities": {}, "guest": {"name": "d", "version": "0",
                               "runtime": "python"}, "implements": ["translate"]})
    elif message["method"] == "translate":  # a helper in a session of its own, then a crash before any answer
        subprocess.Popen(["sleep", "600"], start_new_session=True, stdout=subprocess.DEVNULL)
        sys.exit(3)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is a Linux feature")
def test_a_process_a_command_guest_detached_before_it_crashed_is_ended_and_named(tmp_path: Path):
    """Before: a guest declared by "command" that started a helper outside its process group and then exited left
    it to init, unseen by the host, so it ran on after the run had ended."""
    from process_support import marked_environment, processes_marked

    plugin = tmp_path / "detaches"
    plugin.mkdir()
    (plugin / "guest.py").write_text(DETACHES_AND_CRASHES)
    (plugin / "method.json").write_text(json.dumps({"name": "Detaches", "command": [sys.executable, "guest.py"],
                                                    "dependency_class": "S", "dependencies": []}))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "e0", "source": "one", "reference": "uno"}) + "\n")
    marker, environment = marked_environment()
    try:
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(plugin), "--corpus",
                               str(corpus), "--pair", "eng>spa", "--out", str(tmp_path / "run"), "--quiet",
                               "--latency-sample", "0", *LENIENT], capture_output=True, text=True, env=environment,
                              timeout=120)
        assert done.returncode == 4, done.stderr  # (its only entry failed: the guest exited with code 3)
        assert "the guest exited with code 3" in done.stderr
        assert re.search(r"mt-eval run: warning: \d process(es)? started in this command (was|were) still running "
                         r"at its end \(pid \d+: sleep 600", done.stderr), done.stderr  # (one per attempt at it)
        assert processes_marked(marker) == []
    finally:
        for pid in processes_marked(marker):
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)


DAEMONISES_AND_CRASHES = DETACHES_AND_CRASHES.replace(
    'subprocess.Popen(["sleep", "600"], start_new_session=True, stdout=subprocess.DEVNULL)',
    'subprocess.run(["sh", "-c", "setsid sleep 600 < /dev/null > /dev/null 2>&1 &"], check=True)')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is a Linux feature")
def test_a_process_a_checked_guest_daemonised_before_it_crashed_is_ended_and_named(tmp_path: Path):
    """Before: `mt-eval bridge check` adopted it (its guests are started as every child process is) but did not end
    what it had adopted, as the commands that load a method do, so it ran on after the check had ended."""
    from process_support import marked_environment, processes_marked

    assert DAEMONISES_AND_CRASHES != DETACHES_AND_CRASHES
    (tmp_path / "guest.py").write_text(DAEMONISES_AND_CRASHES)
    vectors = tmp_path / "vectors"
    vectors.mkdir()
    (vectors / "translate.json").write_bytes(
        (Path(__file__).parents[1] / "bridge" / "vectors" / "conformance" / "translate.json").read_bytes())
    marker, environment = marked_environment()
    try:
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "bridge", "check", "--vectors", str(vectors), "--",
                               sys.executable, str(tmp_path / "guest.py")], capture_output=True, text=True,
                              env=environment, timeout=120)
        assert done.returncode == 1, done.stderr
        assert "FAIL  translate" in done.stdout and "exited with code 3" in done.stdout
        assert re.search(r"mt-eval bridge: warning: 1 process started in this command was still running at its end "
                         r"\(pid \d+: sleep 600\)", done.stderr), done.stderr
        assert processes_marked(marker) == []
    finally:
        for pid in processes_marked(marker):
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
