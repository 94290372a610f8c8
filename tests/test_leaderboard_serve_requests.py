"""`mt-eval leaderboard serve` and odd requests: every answer has a status line and a line of text saying what
is wrong; an address that is not one is a 400, one naming no page a 404 saying which pages there are; many
clients at once are queued, not turned away; a client that sends nothing, or its request a byte at a time, is dropped
after a while."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from test_leaderboard_serve import publish, served


def raw(base: str, data: bytes) -> tuple[str, dict[str, str], bytes]:
    """The status line, headers and body a request of these bytes gets."""
    host, port = base.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as client:
        client.sendall(data)
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    return status, dict(line.split(": ", 1) for line in lines if ": " in line), body


def test_a_request_line_that_is_not_http_is_answered_with_a_status_and_a_line_of_text(cards, tmp_path: Path):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        for sent, status, said in [
                (b"GARBAGE\r\n\r\n", "400", "bad request: bad request syntax ('GARBAGE'); send METHOD /PATH HTTP/1.1"),
                (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", "400", "bad request: "),  # (TLS)
                (b"GET / HTTP/1.1 extra\r\n\r\n", "400", "bad request: bad request version ('extra')"),
                (b"GET / HTTP/2.0\r\n\r\n", "505", "invalid HTTP version (2.0): this server speaks HTTP/1.0 and"),
                (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", "414", "the address is too long (over 64 KiB)"),
                (b"GET / HTTP/1.1\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", "431", "the request's headers are too large"),
        ]:
            line, headers, body = raw(server.base, sent)
            assert line.startswith(f"HTTP/1.0 {status} "), (sent[:20], line)  # (was a bare HTML page, no status)
            assert headers["Content-Type"] == "text/plain; charset=utf-8", sent[:20]
            assert body.decode().startswith(said) and "\n" not in body.decode(), body
        assert raw(server.base, b"GET /\r\n\r\n")[0] == "HTTP/1.0 200 OK"  # (an HTTP/0.9 request line: a status too)
    assert server.stderr == server.stopped("SIGTERM") + "\n"


def test_empty_lines_before_the_request_line_are_passed_over_and_a_line_of_blanks_is_a_400(cards, tmp_path: Path):
    """RFC 9112 2.2: a server ignores empty lines before the request line (a client may send one after a body);
    Python's server closed the connection without an answer, to those and to a line of blanks."""
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        line, _, body = raw(server.base, b"\r\n\nGET /leaderboard.json HTTP/1.1\r\nHost: x\r\n\r\n")
        assert line == "HTTP/1.0 200 OK" and b"Alpha" in body
        line, _, body = raw(server.base, b" \t\r\n\r\n")
        assert line.startswith("HTTP/1.0 400 ")
        assert body.decode() == "bad request: the request line is empty; send METHOD /PATH HTTP/1.1"
    assert server.stderr == server.stopped("SIGTERM") + "\n"


def test_an_address_that_is_not_one_is_a_400_and_one_naming_no_page_a_404_saying_which_there_are(cards,
                                                                                               tmp_path: Path):
    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with served(db) as server:
        index = raw(server.base, b"GET / HTTP/1.0\r\n\r\n")[2]
        key = index.decode().split('href="cards/', 1)[1][:16]
        for path, status, said in [
                (b"/%zz", "400", "the address has a % not followed by two hex digits: write a % itself as %25"),
                (b"/index.html%", "400", "the address has a % not followed by two hex digits"),
                (b"/\xff\xfe", "400", "the address holds bytes that are not printable ASCII: percent-encode them"),
                (b"/%ff%fe", "400", "the address's percent-escapes are not UTF-8"),
                (b"/index.html%00", "400", "the address holds a control character (such as %00)"),
                (b"/nope", "404", "no page at this address: the board is at /, its data at /leaderboard.json, a run "
                                  "card's page at /cards/KEY.html"),
                (b"/../../etc/passwd", "404", "no page at this address"),
                (b"/%2e%2e/%2e%2e/etc/passwd", "404", "no page at this address"),
                (b"/cards/..%2f..%2fetc%2fpasswd", "404", "no page at this address"),
                (b"/cards\\..\\..\\etc\\passwd", "404", "no page at this address"),
                (b"/cards/" + key[:4].encode() + b".html", "404", f"no run card has the key '{key[:4]}': a run card's "
                                                                   "page is /cards/KEY.html, KEY the 16 lowercase hex"),
                (b"/cards/zzzzzzzzzzzzzzzz.html", "404", "no run card has the key 'zzzzzzzzzzzzzzzz'"),
        ] + ([(b"/cards/" + key.upper().encode() + b".html", "404", f"no run card has the key '{key.upper()}'")]
             if key.upper() != key else []):  # (a key of digits alone has no capitals to refuse)
            line, _, body = raw(server.base, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            assert line.startswith(f"HTTP/1.0 {status} ") and body.decode().startswith(said), (path, line, body)
            assert b"root:" not in body
            line, _, body = raw(server.base, b"HEAD " + path + b" HTTP/1.1\r\n\r\n")
            assert (line[9:12], body) == (status, b""), path
        for path in (f"/cards/%{ord(key[0]):x}{key[1:]}.html", f"http://127.0.0.1/cards/{key}.html"):  # (its escapes
            line, _, body = raw(server.base, f"GET {path} HTTP/1.1\r\n\r\n".encode())   # decoded; the absolute form)
            assert line == "HTTP/1.0 200 OK" and b"Alpha" in body, path
    assert server.stderr == server.stopped("SIGTERM") + "\n"


@contextmanager
def in_process(tmp_path: Path, cards, **options) -> Iterator[tuple[object, str]]:
    """A server made by `make_server` over a store of one card, not yet serving, and its address; closed after."""
    from mt_eval.leaderboard.board import Conditions, build_board
    from mt_eval.leaderboard.serve import make_server
    from mt_eval.leaderboard.store import open_store

    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    with open_store(db, create=False) as store:
        server = make_server(store, lambda: build_board(store.rows(), Conditions()), port=0, title="t", **options)
        try:
            yield server, f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown() if getattr(server, "_serving", False) else None
            server.server_close()


def serving(server) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server._serving = True
    return thread


def test_clients_connecting_while_the_server_is_busy_wait_their_turn(cards, tmp_path: Path):
    """Python's server queued 5 connections: a burst of clients (a page's many links, a few users) had the rest
    turned away, to connect again a second or more later, or time out."""
    with in_process(tmp_path, cards) as (server, base):
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        clients = []
        try:
            for _ in range(60):  # the server is not accepting yet: each waits in its queue
                clients.append(socket.create_connection((host, int(port)), timeout=0.5))
                clients[-1].sendall(b"GET /leaderboard.json HTTP/1.0\r\n\r\n")
            serving(server)
            for client in clients:
                client.settimeout(10)
                assert client.recv(16) == b"HTTP/1.0 200 OK\r"
        finally:
            for client in clients:
                client.close()


def test_a_client_that_sends_nothing_or_half_a_request_is_dropped_and_others_are_served(cards, tmp_path: Path):
    with in_process(tmp_path, cards, idle_timeout=0.5) as (server, base):
        serving(server)
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        with socket.create_connection((host, int(port))) as silent, \
                socket.create_connection((host, int(port))) as half:
            half.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            assert raw(base, b"GET /leaderboard.json HTTP/1.0\r\n\r\n")[0] == "HTTP/1.0 200 OK"
            started = time.monotonic()
            for client in (silent, half):
                client.settimeout(10)
                assert client.recv(100) == b""  # closed by the server
            assert time.monotonic() - started < 5


def test_a_port_in_use_says_to_give_another(cards, tmp_path: Path, capsys):
    from mt_eval.cli import main

    db = str(tmp_path / "board.db")
    publish(db, tmp_path, cards.card("alpha", quality=0.8))
    capsys.readouterr()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["leaderboard", "serve", "--db", db, "--port", str(port)]) == 1
    assert capsys.readouterr().err == (f"mt-eval leaderboard serve: cannot listen on 127.0.0.1:{port}: Address already "
                                       "in use; give another --port (--port 0: any free one)\n")


def test_a_client_that_sends_its_request_a_byte_at_a_time_is_dropped_when_the_idle_timeout_has_passed(
        cards, tmp_path: Path):
    """Each byte within the socket's timeout had kept the connection, and its thread, for as long as the client
    went on: the timeout is for the whole request, from the connection on."""
    with in_process(tmp_path, cards, idle_timeout=0.5) as (server, base):
        serving(server)
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        with socket.create_connection((host, int(port))) as dripping:
            started = time.monotonic()
            closed_after = None
            for byte in b"GET / HTTP/1.1\r\n" + b"X-Slow: y\r\n" * 20:
                if time.monotonic() - started > 4:  # (still open: the client could go on for ever)
                    break
                try:
                    dripping.sendall(bytes([byte]))
                    closed = bool(select.select([dripping], [], [], 0.2)[0]) and dripping.recv(100) == b""
                except OSError:  # (reset or broken pipe)
                    closed = True
                if closed:  # by the server
                    closed_after = time.monotonic() - started
                    break
            assert closed_after is not None and closed_after < 2.5, closed_after
            assert raw(base, b"GET /leaderboard.json HTTP/1.0\r\n\r\n")[0] == "HTTP/1.0 200 OK"  # others are served
