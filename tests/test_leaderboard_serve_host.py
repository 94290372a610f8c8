"""`mt-eval leaderboard serve --host`: the address it listens on (127.0.0.1 unless given), written in its URLs as a
browser reads them (an IPv6 address in brackets, every interface as the addresses that reach it); an address it
cannot listen on says what to give instead; the line it stops with says which server stopped."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from loopback import ipv6_loopback
from mt_eval.cli import main
from test_leaderboard_serve import publish


def serve_once(db: str, *options: str) -> tuple[str, str, str]:
    """Start `leaderboard serve` with ``options``, fetch the URL its first line names, stop it with Ctrl-C: the
    first line, the page fetched and what it said on stderr."""
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "leaderboard", "serve", "--db", db, "--port",
                                "0", *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        url = re.search(r"http://(\[[0-9a-f:]+\]|[0-9.]+):\d+/", line)
        assert url, line + (process.stderr.read() if process.stderr else "")
        with urllib.request.urlopen(url.group(0), timeout=10) as response:
            page = response.read().decode()
    finally:
        process.send_signal(signal.SIGINT)
        err = process.communicate(timeout=10)[1]
    assert process.returncode == 130
    return line, page, err


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_an_ipv6_address_is_listened_on_and_written_in_brackets(cards, tmp_path: Path, host: str):
    """Before, there was no --host (`--host ::1`: "did you mean --out?"); the address is given bare or as a URL
    writes it."""
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    line, page, err = serve_once(db, "--host", host)
    url = re.search(r"http://\[::1\]:\d+/", line)
    assert url and line.startswith(f"serving the leaderboard of {db} on {url.group(0)} (Ctrl-C stops)")
    assert "Alpha" in page
    assert err == f"mt-eval leaderboard serve: stopped serving {url.group(0)} (Ctrl-C)\n"


def test_every_interface_is_said_with_the_addresses_that_reach_it(cards, tmp_path: Path):
    """http://0.0.0.0:PORT/ is no address to open (browsers refuse it): this machine's and its name's are given."""
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    line, page, _ = serve_once(db, "--host", "0.0.0.0")
    port = re.search(r"port (\d+):", line)
    assert port, line
    assert line.rstrip("\n") == (f"serving the leaderboard of {db} on every interface, port {port.group(1)}: "
                                 f"http://127.0.0.1:{port.group(1)}/ here, http://{socket.gethostname()}:"
                                 f"{port.group(1)}/ from elsewhere (Ctrl-C stops)")
    assert "Alpha" in page


def test_an_address_not_of_this_machine_says_what_to_give(cards, tmp_path: Path, capsys):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    capsys.readouterr()
    assert main(["leaderboard", "serve", "--db", db, "--port", "0", "--host", "192.0.2.1"]) == 1  # (TEST-NET-1)
    assert capsys.readouterr().err == ("mt-eval leaderboard serve: cannot listen on 192.0.2.1:0: Cannot assign "
                                       "requested address; give an address of this machine (--host 127.0.0.1; "
                                       "0.0.0.0: every interface)\n")


@pytest.mark.parametrize(("options", "said"), [
    (["serve", "--host", ""], "argument --host: '' is blank: give an address (127.0.0.1: this machine only; "
                              "0.0.0.0: every interface), or leave --host out"),
    (["serve", "--host", "localhost:8080"], "argument --host: 'localhost:8080' is not an address: give the address "
                                            "alone (--host 0.0.0.0), and the port with --port"),
    (["serve", "--host", "http://0.0.0.0/"], "argument --host: 'http://0.0.0.0/' is not an address"),
    (["--host", "0.0.0.0"], "argument --host: is the address of mt-eval leaderboard serve: add serve, or leave "
                            "--host out"),
])
def test_a_blank_host_a_url_or_one_without_serve_is_refused(cards, tmp_path: Path, capsys, options: list[str],
                                                            said: str):
    """A blank address is every interface to Python's server: the board open to the network without being asked to
    be; a URL or host:port had been "cannot listen on [localhost:8080]:8765"."""
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    capsys.readouterr()
    try:
        status = main(["leaderboard", "--db", db, *options])
    except SystemExit as exited:  # (argparse's own: a value its type refuses)
        status = exited.code
    assert status == 2
    assert said in capsys.readouterr().err
