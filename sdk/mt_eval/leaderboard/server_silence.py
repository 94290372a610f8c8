"""PostgreSQL connections that give up on a server that has stopped answering.

libpq waits for a server without limit. A server that is frozen — stopped (SIGSTOP, Ctrl-Z), swapped out, on a
paused virtual machine — still has its kernel acknowledge every packet, so neither TCP's timeouts nor its
keepalives ever fire, and a publish or a page of ``leaderboard serve`` would wait for ever. A connection made
here watches every wait for the server (psycopg hands the wait an idle tick every tenth of a second): when the
server has sent nothing and taken nothing for `SILENCE_LIMIT_S`, the connection is closed and `ServerSilent`
raised. It is an ``OperationalError`` of a closed connection, so the store reports it as it reports a lost
connection, and its pool drops the connection.

The limit is longer than a publisher waits for another's lock (`store_engine.BUSY_TIMEOUT_S`), during which the
server is silent on purpose; connecting has libpq's own limit (``connect_timeout``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Generator
from typing import Any

SILENCE_LIMIT_S = 90.0  # (half a minute beyond store_engine.BUSY_TIMEOUT_S)


def silence_limited(wait: Generator[Any, Any, Any], limit_s: float, on_silence: Any) -> Generator[Any, Any, Any]:
    """``wait`` (a psycopg generator: it yields what it waits for and is sent what is ready), ended by
    ``on_silence(seconds)`` — which raises — once nothing has been ready for ``limit_s``."""
    silent_since: float | None = None
    try:
        waiting_for = next(wait)
        while True:
            ready = yield waiting_for
            if ready:
                silent_since = None
            else:  # (psycopg's idle tick: nothing was ready within its interval)
                now = time.monotonic()
                silent_since = now if silent_since is None else silent_since
                if now - silent_since >= limit_s:
                    wait.close()
                    on_silence(now - silent_since)
            waiting_for = wait.send(ready)
    except StopIteration as done:
        return done.value


@functools.cache
def connection_class() -> Any:
    """A psycopg ``Connection`` whose waits for the server are silence-limited (psycopg is imported only for a
    PostgreSQL store)."""
    import psycopg

    class ServerSilent(psycopg.OperationalError):
        """The server answered nothing for `SILENCE_LIMIT_S`; the connection is closed."""

    class SilenceLimitedConnection(psycopg.Connection[Any]):
        def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
            return super().wait(silence_limited(gen, SILENCE_LIMIT_S, self._server_silent), *args, **kwargs)

        def _server_silent(self, seconds: float) -> None:
            self.pgconn.finish()  # (the query is abandoned: nothing of the transaction is kept)
            raise ServerSilent(f"the server has answered nothing for {seconds:.0f} s (is it stopped, frozen or "
                               "overloaded?); the connection was closed")

    SilenceLimitedConnection.ServerSilent = ServerSilent  # type: ignore[attr-defined]
    return SilenceLimitedConnection
