"""A command plugin whose program cannot be started in the sandbox (missing, not executable) is said to be so,
by validate and by run, as on the host: not a program to make answer initialize. Under either tool, a corpus kept
in the plugin directory is locked in the sandbox the run starts."""

from __future__ import annotations

import json
import os
import shutil
import sys
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



def demo_corpus_copies() -> list[Path]:
    """The copies of the demo corpus a Python runtime shows: the one `run --demo` reads, and those under every
    site-packages directory (an editable install keeps one there beside the checkout's)."""
    from mt_eval.resources import demo_corpus

    places = [demo_corpus(), *(Path(entry, "mt_eval", "demo", "data", "eng-spa-demo.json") for entry in sys.path
                               if entry and os.path.isabs(entry))]
    return sorted({place.resolve() for place in places if place.is_file()})


@needs_sandbox
def test_every_copy_of_the_demo_corpus_the_runtime_holds_is_locked_in_the_sandbox(tmp_path: Path, sandbox_tool):
    """The runtime is shown read-only, but not the SDK's own copies of the demo corpus in it: scored on that
    corpus, a method would otherwise copy its references and earn an eligible card."""
    plugin = probe_plugin(tmp_path, "python")
    corpus = small_corpus(tmp_path, 1)
    copies = demo_corpus_copies()
    assert copies
    for number, copy in enumerate(copies):
        code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(corpus), "--sandbox",
                              *actions(f"read:{copy}"), out=f"run{number}")
        assert code == 4 and card is not None and card.sandbox is not None, copy
        assert "Permission denied" in (card.results[0].error or ""), (copy, card.results[0])
        assert [(a.kind, a.detail) for a in card.sandbox.denied] == [("file-access", str(copy))]

ENVIRONMENT_READER = """import { readdirSync, readFileSync } from 'node:fs';
export async function translate(entries) {
  const seen = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\\d+$/.test(name))) {
    try { seen.push(readFileSync(`/proc/${pid}/environ`, 'utf8')); } catch { /* gone, or not ours to read */ }
  }
  return entries.map((entry) => ({ id: entry.id, predicted: seen.join(' ').replaceAll('\\0', ' '), error: null }));
}
"""


@needs_sandbox
def test_no_process_in_the_sandbox_shows_the_host_environment(tmp_path: Path, sandbox_tool, monkeypatch):
    """The guest's own environment is cleared, and so is that of every process it can see in /proc (bubblewrap's
    first process among them): a secret in the environment of the run is not there to read."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    plugin = tmp_path / "environment-reader"
    plugin.mkdir()
    (plugin / "translate.js").write_text(ENVIRONMENT_READER)
    (plugin / "method.json").write_text(json.dumps({"name": "Environment reader", "node_entry": "translate.js",
                                                    "dependency_class": "S", "dependencies": []}))
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 1)), "--sandbox")
    assert card is not None and card.results[0].error is None, (code, card and card.results[0].error)
    seen = card.results[0].predicted or ""
    assert "HOME=/tmp" in seen and "OPENAI_API_KEY" not in seen and "sk-must-not-leak" not in seen


@needs_sandbox
def test_a_node_kept_in_the_home_directory_exposes_itself_not_the_home(tmp_path: Path, sandbox_tool, monkeypatch):
    """A node program in ~/bin runs the method, but ~/.ssh beside it is not shown."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    node = home / "bin" / "node"
    try:
        os.link(os.path.realpath(shutil.which("node") or "node"), node)
    except OSError:
        shutil.copy(os.path.realpath(shutil.which("node") or "node"), node)
    monkeypatch.setenv("MT_EVAL_NODE", str(node))
    plugin = probe_plugin(tmp_path, "node")
    key = home / ".ssh" / "id_ed25519"
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 1)), "--sandbox",
                          *actions(f"read:{key}"))
    assert code == 4 and card is not None and card.sandbox is not None  # (not there: the sandbox's /tmp is its own)
    assert card.results[0].predicted is None and f"no such file or directory, open '{key}'" in card.results[0].error
    assert str(home) not in card.sandbox.policy.read_only and str(node) in card.sandbox.policy.read_only
