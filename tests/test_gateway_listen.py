"""Where `mt-eval gateway` listens: an IPv6 address in brackets, and a URL clients can use; a Unix socket that
is its user's only and is removed when it stops; no empty log left behind when it cannot listen; and a log path
that is a pipe refused, not waited on."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from loopback import ipv6_loopback
from mt_eval.cli import main


def policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": "https://api.example.com/v1", "models": [{"id": "a-1"}]}))
    return path


def serve(tmp_path: Path, *where: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy(tmp_path)),
                                *where, "--log", str(tmp_path / "audit.jsonl")], stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    banner = process.stderr.readline()
    while banner and "serving" not in banner:
        banner = process.stderr.readline()
    return process, banner


def stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    return err


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_address_in_brackets_is_listened_on_and_shown_as_a_url(tmp_path: Path):
    """Before: [::1]:PORT was 'Name or service not known', and ::1:0 was served as http://::1:PORT/v1, which no
    client can use."""
    process, banner = serve(tmp_path, "--listen", "[::1]:0")
    try:
        url = re.search(r"serving (http://\S+)", banner).group(1)  # type: ignore[union-attr]
        assert re.fullmatch(r"http://\[::1\]:\d+/v1", url), banner
        with pytest.raises(urllib.error.HTTPError) as answered:
            urllib.request.urlopen(f"{url}/nothing", timeout=10)
        answered.value.close()
        assert answered.value.code == 404
    finally:
        stop(process)


def test_a_unix_socket_is_its_users_only_and_removed_when_the_gateway_stops(tmp_path: Path):
    """Before: the socket was made world-writable (any local user could spend the API key) and left behind."""
    path = tmp_path / "gateway.sock"
    process, banner = serve(tmp_path, "--unix", str(path))
    try:
        assert f"serving unix:{path}" in banner
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        stop(process)
    assert not path.exists()


def test_a_gateway_that_cannot_listen_leaves_no_empty_log(tmp_path: Path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        log = tmp_path / "audit.jsonl"
        assert main(["gateway", "--policy", str(policy(tmp_path)), "--listen", f"127.0.0.1:{port}",
                     "--log", str(log)]) == 1
    assert "cannot listen on" in capsys.readouterr().err
    assert not log.exists()


def test_a_log_that_is_a_pipe_is_refused_at_once_naming_the_option(tmp_path: Path):
    """Before, the gateway hung at its start: opening a pipe to write waits for a reader, which never came."""
    fifo = tmp_path / "audit.jsonl"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy(tmp_path)),
                           "--listen", "127.0.0.1:0", "--log", str(fifo)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert f"mt-eval gateway: --log {fifo} is a pipe (FIFO), not a file. An audit log is appended to and read back " \
           "(its totals, its SHA-256), which a pipe (FIFO) cannot be: give the path of a regular file" in done.stderr
    assert "serving" not in done.stderr and stat.S_ISFIFO(fifo.stat().st_mode)
