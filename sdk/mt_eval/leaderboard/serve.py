"""``mt-eval leaderboard serve``: the same pages as the static site, rendered from the live store on each
request, on a loopback address only.

GET and HEAD (the headers alone) are served; any other method is answered 405 with ``Allow: GET, HEAD``. A
store that cannot be read is a 503 saying so (anything else going wrong is a bug: a 500, and a traceback
printed by the server). A client that hangs up before its answer is written (a closed
tab, a reset) is nobody's error: the request ends without a word."""

from __future__ import annotations

import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgspec

from mt_eval.leaderboard import StoreError
from mt_eval.leaderboard.detail import detail_page
from mt_eval.leaderboard.html import index_page
from mt_eval.leaderboard.site import board_rows

DETAIL = re.compile(r"^/cards/([0-9a-f]{16})\.html$")
ALLOWED = "GET, HEAD"


def make_server(store: Any, build: Callable[[], dict[str, Any]], *, port: int, title: str,
                host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A server (not yet serving) whose pages come from ``build()``, the board of the store's current rows."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "mt-eval-leaderboard"

        def handle(self) -> None:
            try:
                super().handle()
            except ConnectionError:  # the client hung up (reset, broken pipe): there is no one to answer
                self.close_connection = True

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            try:
                if path in ("/", "/index.html"):
                    self._send(index_page(build(), title=title), "text/html")
                elif path == "/leaderboard.json":
                    self._send(msgspec.json.encode(build()).decode(), "application/json")
                elif match := DETAIL.match(path):
                    self._detail(match.group(1))
                else:
                    self._send("not found", "text/plain", 404)
            except StoreError as exc:  # the store went away, ...: say so rather than drop the connection
                self._send(f"the leaderboard store cannot be read: {exc}", "text/plain", 503)
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
            row = next((r for r in board_rows(build()) if r["key"] == key), None)
            card = store.card(key) if row is not None else None
            if row is None:
                self._send("no such run card on this board", "text/plain", 404)
            elif card is None:  # damaged in the store (the server's log names it), or gone since
                self._send("this run card cannot be read from the store", "text/plain", 500)
            else:
                self._send(detail_page(card, row), "text/html")

        def _send(self, text: str, kind: str, status: int = 200) -> None:
            body = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            if status == 405:
                self.send_header("Allow", ALLOWED)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise here
            return

    return ThreadingHTTPServer((host, port), Handler)
