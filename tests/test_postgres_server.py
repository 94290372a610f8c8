"""The tests' own PostgreSQL server does not outlive a test process that is killed before its teardown."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from postgres_server import find_bindir

HERE = Path(__file__).parent


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_test_process_leaves_no_server_behind(how: signal.Signals) -> None:
    if find_bindir() is None:
        if os.environ.get("MT_EVAL_REQUIRE_POSTGRES"):
            pytest.fail("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        pytest.skip("PostgreSQL is not installed")
    script = ("import sys, time\n"
              f"sys.path.insert(0, {str(HERE)!r})\n"
              "from postgres_server import Cluster, find_bindir\n"
              "cluster = Cluster(find_bindir()).start()\n"
              "print(cluster.root, cluster.port, flush=True)\n"
              "time.sleep(600)\n")
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as tests:
        assert tests.stdout is not None
        root, port = tests.stdout.readline().split()
        assert Path(root).is_dir() and _listening(int(port))
        tests.send_signal(how)
        tests.wait(timeout=30)
    deadline = time.monotonic() + 60
    while (Path(root).exists() or _listening(int(port))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _listening(int(port)), "the server still listens after its test process was killed"
    assert not Path(root).exists(), "the cluster's directory is left behind"
