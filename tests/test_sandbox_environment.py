"""The environment a sandboxed guest gets: exactly the names the card's ``sandbox.policy.environment`` lists, and
``PWD``, its working directory, under either tool. Before, bubblewrap gave PWD (it sets it after its chdir) and the
``unshare`` fallback did not, so the same method saw two environments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.loader import read_plugin
from mt_eval.sandbox import plugin_sandbox
from sandbox_support import confining_with, needs_sandbox, probe_plugin

pytestmark = needs_sandbox


@pytest.fixture(params=["bwrap", "unshare"])
def tool(request, monkeypatch):
    with confining_with(request.param, monkeypatch):
        yield request.param


def test_the_guest_gets_the_recorded_environment_and_its_working_directory(tmp_path: Path, monkeypatch, tool):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    source, _ = read_plugin(probe_plugin(tmp_path, "python"))
    assert source is not None
    sandbox = plugin_sandbox(source, network="none")
    argv = sandbox.wrap([sys.executable, "-I", "-c", "import os, json; print(json.dumps(dict(os.environ)))"])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=os.environ)
    environment = json.loads(done.stdout)
    assert sorted(environment) == sorted([*sandbox.policy.environment, "PWD"]), done.stderr
    assert environment["PWD"] == sandbox.policy.plugin == str(source.directory.resolve())
    assert environment["HOME"] == environment["TMPDIR"] == "/tmp" and environment["LANG"] == "C.UTF-8"
