"""The gateway's listening HTTP server around its connections (`mt_eval.gateway.http.ServerConnection`): it
accepts them, sweeps them every `SWEEP_S` for a request that stopped arriving or a head that is late (each
answered 408) and for kept-alive connections idle for `IDLE_S` (closed), and drains them when it closes."""

from __future__ import annotations

import asyncio
from typing import Any

from mt_eval.gateway.http import Handler, ServerConnection, Unreadable

IDLE_S = 75.0  # a kept-alive connection with no request for this long is closed
SWEEP_S = 5.0  # how often connections are looked at: stalled, late or idle (each may be up to one sweep late)


class HttpServer:
    """Serves `ServerConnection`s from one listening socket; `close` stops listening, lets the requests in
    hand finish (up to ``grace_s``), then closes every connection."""

    def __init__(self, handler: Handler, on_unreadable: Unreadable | None = None) -> None:
        self._handler = handler
        self._on_unreadable = on_unreadable
        self._connections: set[ServerConnection] = set()
        self._server: asyncio.Server | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._hurried = False

    def _connection(self) -> ServerConnection:
        return ServerConnection(self._handler, self._connections, self._on_unreadable)

    async def listen(self, *, unix: str | None = None, sock: Any = None, host: str = "127.0.0.1",
                     port: int = 0) -> Any:
        """Start listening; returns the bound address (a path, or (host, port))."""
        loop = asyncio.get_running_loop()
        if unix is not None:
            self._server = await loop.create_unix_server(self._connection, unix)
        elif sock is not None:
            self._server = await loop.create_server(self._connection, sock=sock)
        else:
            self._server = await loop.create_server(self._connection, host, port)
        self._sweeper = loop.call_later(SWEEP_S, self._sweep)
        return self._server.sockets[0].getsockname()

    def _sweep(self) -> None:
        """Answer the requests that stopped arriving (`STALL_S`) or whose head is late (`HEAD_S`), and close the
        connections idle for `IDLE_S`."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for connection in list(self._connections):
            if (overdue := connection.overdue(now)) is not None:
                connection.time_out_request(overdue)
            elif not connection.busy and connection.idle_since < now - IDLE_S:
                connection.close()
        self._sweeper = loop.call_later(SWEEP_S, self._sweep)

    async def close(self, grace_s: float = 10.0) -> None:
        await self.drain(grace_s)
        await self.close_connections()

    async def drain(self, grace_s: float = 10.0) -> None:
        """Stop listening, and let the requests in hand finish: until none is left, ``grace_s`` has passed, or
        `hurry` is called."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close()
            self._server = None
        for connection in self._connections:
            if connection.busy:  # (its client sends nothing more on it: the answer says the connection closes)
                connection.close_after_answer()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while any(c.busy for c in self._connections) and loop.time() < deadline and not self._hurried:  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    def hurry(self) -> None:
        """`drain` waits no longer."""
        self._hurried = True

    async def close_connections(self) -> None:
        for connection in list(self._connections):
            connection.close()
        await asyncio.sleep(0)  # let the transports report their ends
