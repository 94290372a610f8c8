"""Run inside an A1 method's sandbox: forward a loopback TCP port to the LLM gateway's Unix socket, then
become the guest. Standard library only (it runs with ``python -I -S``).

    python -I -S launch.py --forward 127.0.0.1:8080=/run/mt-eval/gateway.sock -- GUEST ARGV…

The sandbox has its own network namespace with nothing but loopback, so this listener is the only
address the method can reach: each connection is piped to the gateway's socket, which the harness
bind-mounted into the sandbox. The listener is bound before the guest starts, so its first request
cannot race it; the forwarder is a child process, and ends with the sandbox.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys

CHUNK = 1 << 16


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            writer.close()


async def _serve(listener: socket.socket, target: str) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(target)
        except OSError as exc:
            print(f"mt-eval sandbox: the gateway is not reachable at {target}: {exc}", file=sys.stderr)
            writer.close()
            return
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        writer.close()
        upstream_writer.close()

    server = await asyncio.start_server(connection, sock=listener, limit=CHUNK)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> int:  # returns only on a usage error, or when the command cannot be run
    if len(argv) < 4 or argv[0] != "--forward" or argv[2] != "--":
        print("usage: launch.py --forward HOST:PORT=UNIX_SOCKET -- COMMAND…", file=sys.stderr)
        return 2
    address, _, target = argv[1].partition("=")
    host, _, port = address.rpartition(":")
    command = argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, int(port)))
    listener.listen(128)
    forwarder = os.fork()
    if forwarder == 0:  # the forwarder: keeps no end of the guest's protocol pipes
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        try:
            asyncio.run(_serve(listener, target))
        finally:
            os._exit(0)
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:  # said as bubblewrap says it (`mt_eval.bridge.start_failures` reads both)
        print(f"mt-eval sandbox: execvp {command[0]}: {exc.strerror or exc}", file=sys.stderr)
        os.kill(forwarder, signal.SIGKILL)  # (no guest to forward for: it does not outlive this process)
        os.waitpid(forwarder, 0)
        return 127 if isinstance(exc, FileNotFoundError) else 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
