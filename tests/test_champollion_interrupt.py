"""Ctrl-C in ``mt-eval locales`` and the Node ``mt-eval-locales``: what was translated is written with its lock
entries, what was kept and what was not is said, the exit status is 130, and a second run sends only the rest."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from champollion_project import (
    NODE,
    NODE_LOCALES,
    locales_command,
    make_project,
    needs_node,
    pairs_config,
    run_locales,
    twins,
)

PLUGIN = {"node": "upper", "python": "rot13"}  # slow when CHAMPOLLION_FIXTURE_SLEEP is set; log their calls
KEPT = (r"; kept (\d+) keys translated \((\d+) files? written, with their lock entries\); not translated: (\d+) "
        r"keys of es; not started: fr\. Run the same command again for the rest; what was kept is not sent again")
STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "interrupted by SIGTERM",
           signal.SIGHUP: "interrupted by SIGHUP"}  # (as every command words them: `mt_eval.cli.termination.said`)


def what_was_kept(said: str, sig: signal.Signals = signal.SIGINT) -> re.Match[str] | None:
    """What was kept, from what the command said after its name, stopped by ``sig`` (named unless it is Ctrl-C's)."""
    return re.fullmatch(re.escape(STOPPED[sig]) + KEPT, said)


def slow_project(root: Path, side: str):
    files = {f"locales/en/{name}.json": {f"k{i}": f"{name} text {i}" for i in range(40)} for name in "abc"}
    pairs = {"en:es": {"methodPlugin": PLUGIN[side], "batchSize": 2}, "en:fr": {"methodPlugin": PLUGIN[side]}}
    return make_project(root, pairs_config(pairs), files, plugins=(PLUGIN[side],))


def interrupted(side: str, project, *argv: str, after_calls: int, sig: signal.Signals = signal.SIGINT,
                call_s: float = 0.3) -> subprocess.CompletedProcess[str]:
    """Run the command (each call of its method taking ``call_s``); once its method was called ``after_calls``
    times, Ctrl-C (SIGINT to its process group), or ``sig`` sent to the command's process alone, as ``kill`` sends
    it."""
    env = {**os.environ, "CHAMPOLLION_FIXTURE_LOG": str(project.log), "CHAMPOLLION_FIXTURE_SLEEP": str(call_s),
           "MT_EVAL": str(Path(sys.executable).with_name("mt-eval"))}
    process = subprocess.Popen(locales_command(side, project, *argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(project.calls()) < after_calls and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        if sig == signal.SIGINT:
            os.killpg(process.pid, signal.SIGINT)  # as a terminal does
        else:
            process.send_signal(sig)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@needs_node
@pytest.mark.parametrize("side", ["node", "python"])
def test_ctrl_c_writes_what_was_translated_says_what_was_kept_and_exits_130(tmp_path: Path, side: str):
    project = slow_project(tmp_path, side)
    done = interrupted(side, project, "--json", after_calls=8)
    assert done.returncode == 130, done.stderr
    said = done.stderr.splitlines()[-1]
    found = what_was_kept(said.split(": ", 1)[1])
    assert found, said
    kept, written, missing = (int(n) for n in found.groups())
    assert kept >= 8 and kept + missing == 120 and written >= 1
    report = json.loads(done.stdout)
    assert report["ok"] is False and report["error"] == {"kind": "interrupted", "message": said.split(": ", 1)[1]}
    assert [locale["locale"] for locale in report["locales"]] == ["es"]
    assert sum(len(f["interrupted"]) for f in report["locales"][0]["files"]) == missing
    received = sum(len(call["sources"]) for call in project.calls() if call["target"] == "spa")
    assert report["locales"][0]["sent"] >= max(kept, received) > kept  # the calls in flight were sent too
    # (a file none of whose keys was translated is not written empty)
    on_disk = {name: project.json(f"locales/es/{name}.json") for name in "abc"
               if (project.root / f"locales/es/{name}.json").exists()}
    lock = project.json("locales/.champollion-lock.json")["files"]
    assert len(on_disk) == written and all(on_disk.values())
    assert sum(len(values) for values in on_disk.values()) == kept
    assert {name: set(values) for name, values in on_disk.items()} == {
        name[3:-5]: set(keys) for name, keys in lock.items()}  # each value written has its lock entry

    calls = len(project.calls())
    again = run_locales(side, project, "--json", env={"CHAMPOLLION_FIXTURE_SLEEP": "0"})
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["locales"][0]["sent"] == missing  # what was kept is not sent again
    assert sum(len(call["sources"]) for call in project.calls()[calls:] if call["target"] == "spa") == missing


@needs_node
@pytest.mark.parametrize("side", ["node", "python"])
def test_ctrl_c_before_any_call_returned_writes_no_empty_file_and_no_lock_file(tmp_path: Path, side: str):
    """Before, each target file was written as ``{}`` (and the lock file with it), and the command said it had
    kept 0 keys in 3 files written."""
    project = slow_project(tmp_path, side)
    done = interrupted(side, project, after_calls=1, call_s=30)
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines()[-1].split(": ", 1)[1] == (
        "interrupted; nothing was translated or written; not translated: 120 keys of es; not started: fr. Run the "
        "same command again for the rest")
    assert sorted(p.name for p in (project.root / "locales").iterdir()) == ["en"]


SLOW_IMPORT = {  # a Python plugin whose import takes 30 s (it logs a call as it starts)
    ".champollion/methods/slow/method.json": {"name": "Slow", "method_id": "slow", "class": "custom-plugin",
                                               "description": "slow to import", "entry_point": "pipeline:Slow",
                                               "dependency_class": "S", "dependencies": []},
    ".champollion/methods/slow/pipeline.py": "import os, time\n\nopen(os.environ['CHAMPOLLION_FIXTURE_LOG'], 'a')"
                                             ".write('{}\\n')\ntime.sleep(30)\n\n\nclass Slow:\n    pass\n",
    "locales/en/a.json": {"hello": "Hello", "world": "World"},
}


@needs_node
@pytest.mark.parametrize("side", ["node", "python"])
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_stopped_while_the_method_is_imported_is_an_interruption_not_the_plugins_fault(
        tmp_path: Path, side: str, sig: signal.Signals, status: int):
    """Before, ``mt-eval locales`` said the plugin "cannot be loaded", blamed its import ("interrupted (Ctrl-C)", for a
    SIGTERM too) and exited with status 1."""
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "slow"}}), SLOW_IMPORT, plugins=())
    done = interrupted(side, project, after_calls=1, sig=sig)
    assert done.returncode == status, done.stderr
    assert "cannot be loaded" not in done.stderr and "pipeline.py" not in done.stderr
    assert done.stderr.splitlines()[-1].split(": ", 1)[1] == (
        f"{STOPPED[sig]}; nothing was translated or written; not translated: 2 keys of es. Run the same command again "
        "for the rest")


@needs_node
@pytest.mark.parametrize("side", ["node", "python"])
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_stop_as_ctrl_c_does_keeping_what_was_translated(tmp_path: Path, side: str,
                                                                          sig: signal.Signals, status: int):
    """One SIGTERM (``kill``, ``docker stop``, a CI job cancelled) is not taken for two Ctrl-C's: the Python command
    on uvloop heard the SIGINT it is passed on as twice, stopped at once and wrote nothing. Both commands name the
    signal, in the same words, on stderr and in the JSON report, as every command does; before, they said
    "interrupted; kept …" as for a Ctrl-C."""
    project = slow_project(tmp_path, side)
    done = interrupted(side, project, "--json", after_calls=8, sig=sig)
    assert done.returncode == status, done.stderr
    assert "interrupted again" not in done.stderr
    said = done.stderr.splitlines()[-1].split(": ", 1)[1]
    found = what_was_kept(said, sig)
    assert found, done.stderr
    assert json.loads(done.stdout)["error"] == {"kind": "interrupted", "message": said}
    kept = int(found.group(1))
    assert kept >= 8 and sum(len(project.json(f"locales/es/{name}.json")) for name in "abc"
                             if (project.root / f"locales/es/{name}.json").exists()) == kept


def test_ctrl_c_while_a_method_blocks_the_event_loop_stops_at_once_keeping_what_was_translated(tmp_path: Path):
    """Python's own SIGINT handler runs inside the blocked call and interrupts it; no call is made after it (the
    batches waiting their turn would each block again). Before, Ctrl-C (and a second one) did nothing until the
    loop watchdog's limit (--timeout per entry times the batch size)."""
    files = {"locales/en/a.json": {f"k{i}": f"text {i}" + (" #block" if i == 9 else "") for i in range(20)}}
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "rot13", "batchSize": 2}}), files,
                           plugins=("rot13",))
    started = time.monotonic()
    done = interrupted("python", project, after_calls=5)
    assert time.monotonic() - started < 30 and done.returncode == 130, done.stderr
    said = done.stderr.splitlines()[-1]
    assert said.startswith("mt-eval locales: interrupted; kept ") and "not translated: " in said
    kept = project.json("locales/es/a.json")
    assert 8 <= len(kept) < 20 and "k9" not in kept and "failed" not in done.stdout
    blocked = [call for call in project.calls() if any("#block" in source for source in call["sources"])]
    assert len(blocked) == 1  # the blocked call was not made again in halves


@needs_node
@pytest.mark.parametrize("side", ["node", "python"])
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_while_waiting_for_the_project_says_nothing_was_sent(tmp_path: Path, side: str, sig: signal.Signals,
                                                                     status: int):
    """A SIGTERM is named on stderr and in the JSON report alike; before, the Node command named it in neither and
    the Python one on stderr only."""
    from mt_eval.locks import ProjectLock

    project = slow_project(tmp_path, side)
    holder = ProjectLock(project.root / "locales", command="a test").acquire()
    try:
        process = subprocess.Popen(locales_command(side, project, "--wait", "--json"), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert process.stderr is not None
        waiting = process.stderr.readline()
        if sig == signal.SIGINT:
            os.killpg(process.pid, sig)
        else:
            process.send_signal(sig)
        out, err = process.communicate(timeout=30)
    finally:
        holder.release()
    assert waiting.endswith("; waiting for it (--wait)\n"), waiting
    assert process.returncode == status, err
    said = f"{STOPPED[sig]} before anything was sent; nothing was written"
    assert err.endswith(f": {said}\n"), err
    assert json.loads(out)["error"] == {"kind": "interrupted", "message": said}
    assert project.calls() == [] and not (project.root / "locales" / "es").exists()


@needs_node
def test_a_call_that_waits_long_is_said_now_and_then_and_alike_by_both_commands(tmp_path: Path, monkeypatch, capsys):
    """Before, a method that hung showed nothing for as long as its calls could take (a batch of 16 strings: 32
    minutes, and as long again sent one string at a time). Normal runs, and --quiet, say nothing of it."""
    from mt_eval.champollion import report
    from mt_eval.cli import main

    monkeypatch.setattr(report, "WAITING_AFTER_S", 0.2)  # (10 s, then every 30 s, as the commands say it)
    monkeypatch.setattr(report, "WAITING_EVERY_S", 60.0)
    config = pairs_config({"en:es": {"methodPlugin": "reverse"}})
    projects = twins(tmp_path, config, {"locales/en.json": {"slow": "!sleep 700 slow", "fast": "Fine"}})
    assert main(["locales", "--config", str(projects["python"].root)]) == 0
    python = capsys.readouterr().err
    cli = NODE_LOCALES.parent.parent / "lib" / "champollion" / "cli.js"
    script = (f"import {{ main }} from {json.dumps(cli.as_uri())};"
              f"process.exitCode = await main(['--config', {json.dumps(str(projects['node'].root))}], "
              "{ waiting: { afterS: 0.2, everyS: 60 } });")
    node = subprocess.run([NODE or "node", "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert node.returncode == 0, node.stderr
    shown = [re.sub(r"sent \d+ s ago", "sent N s ago", err).splitlines() for err in (python, node.stderr)]
    assert shown[0] == shown[1] == [
        "es: still waiting for the method: 2 strings sent N s ago (a call may take 120 s a string before it fails); "
        "Ctrl-C stops, keeping what was translated",
        "es: 2/2 strings answered"]
    assert main(["locales", "--config", str(projects["python"].root), "--force", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(report, "WAITING_AFTER_S", 10.0)
    assert main(["locales", "--config", str(projects["python"].root), "--force"]) == 0
    assert capsys.readouterr().err == "es: 2/2 strings answered\n"


SLOW_CLOSE = {  # a Python plugin that translates at once and takes 30 s to close (it logs a call as it starts closing)
    ".champollion/methods/slowclose/method.json": {"name": "Slow close", "method_id": "slowclose",
                                                   "class": "custom-plugin", "description": "slow to close",
                                                   "entry_point": "pipeline:SlowClose", "dependency_class": "S",
                                                   "dependencies": []},
    ".champollion/methods/slowclose/pipeline.py": (
        "import asyncio, os\n\n\nclass SlowClose:\n    async def translate(self, entries, config):\n"
        "        return [{'id': e['id'], 'predicted': e['source'].upper()} for e in entries]\n\n"
        "    async def aclose(self):\n        open(os.environ['CHAMPOLLION_FIXTURE_LOG'], 'a').write('{}\\n')\n"
        "        await asyncio.sleep(30)\n"),
    "locales/en/a.json": {"hello": "Hello", "world": "World"},
}


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_stopped_while_the_methods_close_says_what_was_written(tmp_path: Path, sig: signal.Signals, status: int):
    """Before, a Ctrl-C (or the second one) that came while the methods were being closed, the files already written,
    said "interrupted before anything was sent; nothing was written"."""
    project = make_project(tmp_path, pairs_config({"en:es": {"methodPlugin": "slowclose"}}), SLOW_CLOSE, plugins=())
    done = interrupted("python", project, after_calls=1, sig=sig)
    assert done.returncode == status, done.stderr
    assert project.json("locales/es/a.json") == {"hello": "HELLO", "world": "WORLD"}
    assert done.stderr.splitlines()[-1] == (f"mt-eval locales: {STOPPED[sig]}; kept 2 keys translated (1 file "
                                            "written, with their lock entries)"), done.stderr


def test_keys_copied_as_they_are_are_not_said_to_be_translated():
    """A key copied without being sent (a URL, a number) is kept as copied, not counted as translated."""
    from mt_eval.champollion.report import interrupted_message
    from mt_eval.champollion.sync import FileReport, LocaleReport, SyncReport

    done = FileReport("a.json", translated=["k1", "k2"], copied=["url"], written=True)
    left = FileReport("b.json", interrupted=["k3"])
    report = SyncReport(dry_run=False, interrupted=True,
                        locales=[LocaleReport("es", "en:es", "upper", "en→es", files=[done, left])])
    assert interrupted_message(report) == (
        "interrupted; kept 3 keys (2 translated, 1 copied) (1 file written, with their lock entries); not translated:"
        " 1 key of es. Run the same command again for the rest; what was kept is not sent again")
    done.copied = []
    assert interrupted_message(report).startswith("interrupted; kept 2 keys translated (1 file written")
