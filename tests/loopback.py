"""What the tests' stand-in HTTP servers share: a threaded server on 127.0.0.1 (a free port) that serves from a
thread while used as a context manager, records requests under a lock, and answers JSON; and whether this machine
has an IPv6 loopback to listen on (`ipv6_loopback`)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOW_S = 20.0


class LoopbackServer(ThreadingHTTPServer):
    """Subclasses set the handler class and ``path_prefix`` (what ``base_url`` ends with)."""

    daemon_threads = True
    request_queue_size = 64
    path_prefix = ""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{self.path_prefix}"

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(5)


class JsonHandler(BaseHTTPRequestHandler):
    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def reply(self, status: int, payload: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def wait_for_the_client_to_leave(self, request: dict[str, Any]) -> None:
        """Answer nothing: wait (up to `SLOW_S`) for the client to close the connection, and record in
        ``request["left_after_s"]`` after how long it did (None while it has not)."""
        started = time.monotonic()
        self.connection.settimeout(0.05)
        while time.monotonic() - started < SLOW_S:
            try:
                if self.connection.recv(1) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        with self.server.lock:  # (a LoopbackServer's)
            request["left_after_s"] = time.monotonic() - started

    def log_message(self, *args: Any) -> None:
        pass


def ipv6_loopback() -> bool:
    """Whether ::1 can be listened on here (a container may have no IPv6)."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True
