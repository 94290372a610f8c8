"""``mt-eval leaderboard serve``: the same pages as the static site, rendered from the live store on each
request, on a loopback address only.

GET and HEAD (the headers alone) are served; any other method is answered 405 with ``Allow: GET, HEAD``. A
store that cannot be read is a 503 saying only that the board is unavailable for now (the reason, which may name
the database, its user, host and port, goes to the server's stderr, once: `StoreOutage`); anything else going
wrong is a bug: a 500, and a traceback printed by the server. A client that hangs up before its answer is written
(a closed tab, a reset) is nobody's error: the request ends without a word.

Every answer has a status line and headers, also to a request line that is not HTTP (Python's server would answer
it as HTTP/0.9: a bare page, no status); errors are a line of plain text saying what is wrong. An address that
is not one (a bad percent-escape, bytes that are not UTF-8, a control character) is a 400; one that names no page
is a 404 saying which pages there are; empty lines before the request line are passed over (RFC 9112 2.2), a
line of blanks is a 400. A client that sends nothing, half a request, or its request a byte at a time, is dropped
``IDLE_TIMEOUT_S`` after it connected (it holds only its own thread meanwhile), and many clients connecting at once
are queued, not turned away."""

from __future__ import annotations

import io
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import msgspec

from mt_eval.control_chars import escaped_for_terminal
from mt_eval.leaderboard import StoreError
from mt_eval.leaderboard.detail import detail_page
from mt_eval.leaderboard.html import index_page
from mt_eval.leaderboard.site import board_rows

DETAIL = re.compile(r"^/cards/([0-9a-f]{16})\.html$")
CARD_ADDRESS = re.compile(r"^/cards/([^/]*)\.html$")
ALLOWED = "GET, HEAD"
IDLE_TIMEOUT_S = 30.0  # a connection that sends no complete request in this time is closed
QUEUE = socket.SOMAXCONN  # connections waiting to be accepted (socketserver's 5 made a burst of clients wait)
PAGES = "the board is at /, its data at /leaderboard.json, a run card's page at /cards/KEY.html"
BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# what Python's server says (its reason) -> what the client is told
ERRORS = {400: "bad request: {message}; send METHOD /PATH HTTP/1.1",
          414: "the address is too long (over 64 KiB): " + PAGES,
          431: "the request's headers are too large: {message}",
          505: "{message}: this server speaks HTTP/1.0 and HTTP/1.1"}


UNAVAILABLE = "the leaderboard is unavailable right now; try again later"


class StoreOutage:
    """The server's log of a store that cannot be read: each reason on stderr once (a flood of requests to a store
    that is down is one line, not one a request), and, when the store can be read again, that it can. Past
    `MOST_REASONS` distinct reasons in one outage (a reason whose text keeps changing), one line says that further
    ones are not shown: neither the log nor the server's memory grows with the outage's length."""

    MOST_REASONS = 100

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._said: set[str] = set()  # the reasons logged since the store was last read
        self._muted = False  # whether further distinct reasons go unlogged until the store is read

    def failed(self, error: StoreError) -> None:
        reason = str(error)
        with self._lock:
            if reason in self._said or self._muted:
                return
            if len(self._said) < self.MOST_REASONS:
                self._said.add(reason)
                self._log(f"the store cannot be read (pages are answered 503 until it can): {error}")
            else:
                self._muted = True
                self._log(f"the store still cannot be read, for reasons other than the {self.MOST_REASONS} above: "
                          "they are not shown until it can be read again")

    def read(self) -> None:
        if self._said:  # (read without the lock first: this is every page's path)
            with self._lock:
                if self._said:
                    self._said.clear()
                    self._muted = False
                    self._log("the store can be read again")

    @staticmethod
    def _log(text: str) -> None:
        print(escaped_for_terminal(f"mt-eval leaderboard serve: {text}"), file=sys.stderr, flush=True)


class RequestDeadline(io.RawIOBase):
    """A connection's reading end whose reads all end by one deadline: a client that sends its request a byte at a
    time, each within the socket's timeout, is dropped when the deadline passes as one that sends nothing is."""

    def __init__(self, connection: socket.socket, seconds: float) -> None:
        self._connection = connection
        self._deadline = time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not complete in time")
        self._connection.settimeout(left)
        return self._connection.recv_into(buffer)


class BadAddress(ValueError):
    """A request target that is not an address: the message says why."""


def address_path(target: str) -> str:
    """The decoded path of a request target (origin form ``/path?query``, or absolute form
    ``http://host/path``); `BadAddress` if it is not a valid address."""
    if any(not 0x21 <= ord(c) < 0x7F for c in target):
        raise BadAddress("the address holds bytes that are not printable ASCII: percent-encode them (%XX)")
    path = urlsplit(target).path if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", target) else target.split("?", 1)[0]
    if BAD_ESCAPE.search(path):
        raise BadAddress("the address has a % not followed by two hex digits: write a % itself as %25")
    try:
        decoded = unquote_to_bytes(path).decode("utf-8")
    except UnicodeDecodeError:
        raise BadAddress("the address's percent-escapes are not UTF-8") from None
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in decoded):
        raise BadAddress("the address holds a control character (such as %00)")
    return decoded or "/"


def authority(host: str, port: int) -> str:
    """``host:port`` as a URL writes it: an IPv6 address in brackets (``[::1]:8765``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def make_server(store: Any, build: Callable[[], dict[str, Any]], *, port: int, title: str,
                host: str = "127.0.0.1", idle_timeout: float = IDLE_TIMEOUT_S) -> ThreadingHTTPServer:
    """A server (not yet serving) whose pages come from ``build()``, the board of the store's current rows; a
    connection that sends no complete request in ``idle_timeout`` seconds is closed."""
    outage = StoreOutage()

    def board() -> dict[str, Any]:
        built = build()
        outage.read()
        return built

    class Handler(BaseHTTPRequestHandler):
        server_version = "mt-eval-leaderboard"
        default_request_version = "HTTP/1.0"  # (not HTTP/0.9: an answer without a status line is no answer)
        timeout = idle_timeout
        raw_requestline: bytes

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # (the socket stays open: the deadline's reader reads it)
            self.rfile = io.BufferedReader(RequestDeadline(self.connection, idle_timeout))

        def parse_request(self) -> bool:
            try:
                while self.raw_requestline in (b"\r\n", b"\n"):  # passed over before the request line (RFC 9112)
                    self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline:  # the client hung up
                    self.close_connection = True
                    return False
                self.command = self.requestline = self.request_version = ""
                if len(self.raw_requestline) > 65536:
                    self.send_error(414)
                    return False
                if not self.raw_requestline.strip():  # (Python's server closes the connection without a word)
                    self.send_error(400, "the request line is empty")
                    return False
                return super().parse_request()
            finally:
                self.connection.settimeout(idle_timeout)  # the answer has the whole timeout to be written

        def handle(self) -> None:
            try:
                super().handle()
            except ConnectionError:  # the client hung up (reset, broken pipe): there is no one to answer
                self.close_connection = True

        def do_GET(self) -> None:
            try:
                path = address_path(self.path)
            except BadAddress as exc:
                self._send(str(exc), "text/plain", 400)
                return
            try:
                if path in ("/", "/index.html"):
                    self._send(index_page(board(), title=title, detail_pages=True), "text/html")
                elif path == "/leaderboard.json":
                    self._send(msgspec.json.encode(board()).decode(), "application/json")
                elif match := DETAIL.match(path):
                    self._detail(match.group(1))
                elif match := CARD_ADDRESS.match(path):
                    self._send(f"no run card has the key {match.group(1)[:40]!r}: a run card's page is "
                               "/cards/KEY.html, KEY the 16 lowercase hex digits the board links to", "text/plain", 404)
                else:
                    self._send(f"no page at this address: {PAGES}", "text/plain", 404)
            except StoreError as exc:  # the store went away, ...: said to the log; a visitor learns nothing of it
                outage.failed(exc)
                self._send(UNAVAILABLE, "text/plain", 503)
            except ConnectionError:
                raise
            except Exception:  # a bug: answered, and its traceback shown by the server
                self._send("internal error (the server's output has the traceback)", "text/plain", 500)
                raise

        do_HEAD = do_GET  # `_send` leaves the body out

        def refuse(self) -> None:
            self._send(f"{self.command} is not allowed: this server only reads ({ALLOWED})", "text/plain", 405)

        do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_TRACE = do_CONNECT = refuse

        def __getattr__(self, name: str) -> Any:  # any other method (PROPFIND, FOO, get): 405 too, not 501
            if name.startswith("do_"):
                return self.refuse
            raise AttributeError(name)

        def _detail(self, key: str) -> None:
            row = next((r for r in board_rows(board()) if r["key"] == key), None)
            card = store.card(key) if row is not None else None
            if row is None:
                self._send("no such run card on this board", "text/plain", 404)
            elif card is None:  # damaged in the store (the server's log names it), or gone since
                self._send("this run card cannot be read from the store", "text/plain", 500)
            else:
                self._send(detail_page(card, row), "text/html")

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """Python's server's own errors (a request line that is not HTTP, too long, ...), as a line of text."""
            said = (message or self.responses.get(code, ("error",))[0])[:200]
            text = ERRORS.get(code, "{message}").format(message=said[:1].lower() + said[1:])
            self.close_connection = True
            self._send(text, "text/plain", code)

        def _send(self, text: str, kind: str, status: int = 200) -> None:
            body = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            if self.close_connection:
                self.send_header("Connection", "close")
            if status == 405:
                self.send_header("Allow", ALLOWED)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise here
            return

    class Server(ThreadingHTTPServer):
        request_queue_size = QUEUE
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET  # (::1, ::: an IPv6 socket)

    return Server((host, port), Handler)
