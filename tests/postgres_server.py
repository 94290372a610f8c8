"""A throwaway PostgreSQL server for the tests: initdb and pg_ctl in a temporary directory, listening on a free
loopback port, stopped and removed at the end. PostgreSQL refuses to run as root, so as root the cluster is
run as the ``postgres`` user (Debian's package creates it), else ``nobody``. A watchdog process stops the cluster
if the test process dies without tearing it down (SIGTERM, SIGKILL), so no server outlives its tests."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path


def find_bindir() -> Path | None:
    """Where initdb and pg_ctl are: $MT_EVAL_PG_BIN, PATH, pg_config, or Debian's /usr/lib/postgresql/N/bin."""
    candidates = [os.environ.get("MT_EVAL_PG_BIN")]
    on_path = shutil.which("pg_ctl")
    candidates.append(str(Path(on_path).parent) if on_path else None)
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(found.stdout.strip() or None)
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """``start()`` it, ``database()`` gives a fresh database's URL, ``stop()`` removes everything."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="mt-eval-pg-"))
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = next((name for name in ("postgres", "nobody") if _exists(name)), None)
            if self.user is None:
                raise RuntimeError("running as root, and there is no postgres or nobody user to run PostgreSQL as")
            account = pwd.getpwnam(self.user)
            os.chown(self.root, account.pw_uid, account.pw_gid)
        self.port = 0
        self.started = False
        self.watchdog: subprocess.Popen[bytes] | None = None

    def _run(self, *argv: str) -> None:
        done = subprocess.run([str(self.bindir / argv[0]), *argv[1:]], capture_output=True, text=True,
                              user=self.user, cwd=self.root, timeout=120, check=False)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()}\n{tail}")

    def start(self) -> Cluster:
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", "mt_eval", "-A", "trust", "-E", "UTF8", "--no-sync")
        self.port = free_port()
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60")
        self._run("pg_ctl", "-D", str(data), "-l", str(self.root / "server.log"), "-w", "-t", "60", "-o", options,
                  "start")
        self.started = True
        self._watch()
        return self

    def _watch(self) -> None:
        """Start the watchdog: it waits for the end of a pipe only this process holds, then stops the server and
        removes its directory. Closing the pipe by dying is the only way the watchdog acts; `stop` ends it first."""
        stop = [str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"]
        script = ("import shutil, subprocess, sys\n"
                  "sys.stdin.buffer.read()\n"
                  f"subprocess.run({stop!r}, user={self.user!r}, capture_output=True, timeout=120, check=False)\n"
                  f"shutil.rmtree({str(self.root)!r}, ignore_errors=True)\n")
        self.watchdog = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, cwd="/",
                                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


    @property
    def url(self) -> str:
        return f"postgresql://mt_eval@127.0.0.1:{self.port}/postgres"

    def database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"board_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=mt_eval dbname=postgres",
                             autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return f"postgresql://mt_eval@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
            if self.watchdog.stdin is not None:
                self.watchdog.stdin.close()
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
