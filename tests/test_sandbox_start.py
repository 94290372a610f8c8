"""A command plugin whose program cannot be started in the sandbox (missing, not executable) is said to be so,
by validate and by run, as on the host: not a program to make answer initialize. Under either tool, a corpus kept
in the plugin directory is locked in the sandbox the run starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.bridge import messages as m
from mt_eval.bridge.start_failures import start_error
from mt_eval.cli import main
from mt_eval.sandbox import find_tool
from mt_eval.validate import validate_plugin
from sandbox_support import actions, needs_sandbox, probe_plugin, run_card, small_corpus

FIX = 'make "command" in method.json start a program that exists and may be run'


def command_plugin(root: Path, command: list[str]) -> Path:
    plugin = root / "cmd"
    plugin.mkdir()
    (plugin / "method.json").write_text(json.dumps({"name": "Cmd", "method_id": "cmd", "command": command,
                                                    "dependency_class": "S", "dependencies": []}))
    (plugin / "tool.sh").write_text("#!/bin/sh\nexit 0\n")  # (not executable)
    return plugin


@pytest.fixture(params=["bwrap", "unshare"])
def sandbox_tool(request, monkeypatch):
    monkeypatch.setenv("MT_EVAL_SANDBOX_TOOL", request.param)
    find_tool.cache_clear()
    try:
        find_tool()
    except Exception as exc:
        pytest.skip(f"{request.param} cannot confine here: {exc}")
    yield request.param
    monkeypatch.delenv("MT_EVAL_SANDBOX_TOOL")
    find_tool.cache_clear()


@needs_sandbox
@pytest.mark.parametrize(("command", "why"), [(["./missing-program"], "No such file or directory"),
                                              (["./tool.sh"], "Permission denied")])
def test_a_program_the_sandbox_cannot_start_is_named_by_validate_and_run(tmp_path: Path, sandbox_tool, capsys,
                                                                         command, why):
    plugin = command_plugin(tmp_path, command)
    [problem] = validate_plugin(plugin, scan=False, sandbox=True).errors
    assert problem.path == "$.command" and f"' in the sandbox: {why} (there a plugin sees " in problem.message
    assert problem.message.startswith("cannot start guest '") and problem.hint.startswith(FIX)
    assert "initialize" not in f"{problem.message} {problem.hint}"  # (before: "make it answer initialize")
    code = main(["run", "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 1)), "--sandbox", "--quiet",
                 "--out", str(tmp_path / "run"), "--latency-sample", "0"])
    err = capsys.readouterr().err
    assert code != 0 and "mt-eval run: cmd cannot start: cannot start guest '" in err
    assert f"in the sandbox: {why}" in err and f"fix: {FIX}" in err and "execvp" not in err, err


@pytest.mark.parametrize("said", ["bwrap: execvp ./prog: No such file or directory",
                                  "setpriv: failed to execute ./prog: No such file or directory",
                                  "mt-eval sandbox: execvp ./prog: No such file or directory"])
def test_each_sandbox_launchers_words_for_a_program_it_cannot_run_are_read(said: str):
    failed = start_error(m.BridgeError(m.GUEST_EXITED, "the guest exited with code 1"), label="cmd",
                         start_timeout_s=10, exit_code=127, stderr_tail=f"{said}\n")
    assert failed.message.startswith("cannot start guest './prog' in the sandbox: No such file or directory (")
    assert failed.data["cannot_run"] and failed.data["stderr_tail"] == ""
    quiet = start_error(m.BridgeError(m.GUEST_EXITED, "the guest exited with code 0"), label="cmd",
                        start_timeout_s=10, exit_code=0, stderr_tail=f"{said}\n")  # (it ran, and said so itself)
    assert quiet.message.startswith("guest cmd failed to start") and "cannot_run" not in quiet.data


def test_the_gateway_launcher_says_a_program_it_cannot_run_as_bubblewrap_does_and_leaves_nothing(tmp_path: Path):
    """Before: a Python traceback from os.execvp, and its port forwarder ran on with nothing to forward for."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "mt_eval.sandbox.launch", "--forward",
                           f"127.0.0.1:0={tmp_path / 'gateway.sock'}", "--", str(tmp_path / "missing-program")],
                          capture_output=True, text=True, timeout=30, start_new_session=True)
    assert (done.returncode, done.stderr) == (127, f"mt-eval sandbox: execvp {tmp_path / 'missing-program'}: "
                                                   "No such file or directory\n")
    assert "Traceback" not in done.stderr
    socket_name = str(tmp_path / "gateway.sock").encode()
    left = []  # (the forwarder is the launcher's child: once the launcher is gone, init's — so looked for by name)
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and socket_name in (entry / "cmdline").read_bytes():
                left.append(int(entry.name))
        except OSError:
            continue
    assert left == []


@needs_sandbox
def test_a_corpus_kept_in_the_plugin_directory_is_locked_in_the_sandbox(tmp_path: Path, sandbox_tool):
    """The plugin directory is shown read-only, but not the corpus in it: its references are not there to read,
    and the attempt leaves the run not eligible."""
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(plugin, 1)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                          *actions(f"read:{corpus}"))
    assert code == 4 and card is not None and card.sandbox is not None and card.eligibility is not None
    assert card.sandbox.tool == {"bwrap": "bubblewrap", "unshare": "unshare"}[sandbox_tool]
    assert card.results[0].predicted is None and "Permission denied" in (card.results[0].error or "")
    assert [(a.kind, a.detail) for a in card.sandbox.denied] == [("file-access", str(corpus))]
    assert not card.eligibility.eligible
