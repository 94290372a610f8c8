"""Confining a guest command: the tool (Debian's bubblewrap, else util-linux ``unshare``), whether this
host can use it, and the command line that runs a guest inside.

Nothing ever runs unconfined by accident: `find_tool` probes the tool once per process with a real
sandboxed ``true`` and raises `SandboxUnavailable` (saying why, and what to install or enable) when the
host cannot isolate. ``MT_EVAL_SANDBOX_TOOL`` picks ``bwrap`` or ``unshare`` (or ``none``, to test the refusal).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from mt_eval.sandbox.policy import NETWORK_MEANING, Network, SandboxPolicy
from mt_eval.sandbox.view import FileSystemView, build_view

GATEWAY_MOUNT = "/run/mt-eval"       # where the gateway's socket directory appears inside
GATEWAY_SOCKET = "gateway.sock"
GATEWAY_LISTEN = ("127.0.0.1", 8080)  # the loopback address the forwarder serves inside the sandbox
NAMESPACES = ["user", "mount", "pid", "network", "ipc", "uts", "cgroup"]
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ an AppArmor profile "
                "for bwrap)")


class SandboxUnavailable(RuntimeError):
    """This host cannot isolate a method; the message says why and how to fix it."""


@dataclass(frozen=True)
class Tool:
    name: str     # "bubblewrap" or "unshare"
    path: str
    version: str


def _version(path: str) -> str:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else "unknown"


def _probe(argv: list[str]) -> str | None:
    """None when ``argv`` ran ``true`` confined; else what went wrong."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit status {done.returncode}")


@cache
def find_tool() -> Tool:
    """The isolation tool this host can use (probed once per process)."""
    wanted = os.environ.get("MT_EVAL_SANDBOX_TOOL", "").strip().lower()
    reasons = []
    if wanted == "none":
        raise SandboxUnavailable("this host cannot isolate a method: isolation is switched off here "
                                 "(MT_EVAL_SANDBOX_TOOL=none); unset it to use bubblewrap")
    if wanted in ("", "bwrap", "bubblewrap"):
        path = shutil.which("bwrap")
        if path is None:
            reasons.append("bwrap (bubblewrap) is not installed, or not on PATH")
        else:
            problem = _probe([path, *_BWRAP_BASE, "--ro-bind", "/usr", "/usr", *_merged_usr(), "--", "true"])
            if problem is None:
                return Tool("bubblewrap", path, _version(path).removeprefix("bubblewrap "))
            reasons.append(f"bwrap cannot create a sandbox here: {problem}")
    if wanted in ("", "unshare"):
        from mt_eval.sandbox.unshare import probe_unshare

        path = shutil.which("unshare")
        problem = "util-linux unshare is not installed, or not on PATH" if path is None else probe_unshare(path)
        if path is not None and problem is None:
            return Tool("unshare", path, _version(path))
        reasons.append(problem or "unshare failed")
    raise SandboxUnavailable("this host cannot isolate a method: " + "; ".join(reasons) + f". Fix: {INSTALL_HINT}")


_BWRAP_BASE = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
               "--cap-drop", "ALL"]


def _merged_usr() -> list[str]:
    out = []
    for name in ("bin", "lib", "lib64", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            out += ["--symlink", os.readlink(path), str(path)]
    return out


@cache
def _locked_file() -> str:
    """An empty, unreadable (mode 000) host file, bound read-only over each locked name that is a file on the host;
    removed at exit."""
    import atexit
    import tempfile

    directory = tempfile.mkdtemp(prefix="mt-eval-sandbox-locked-")
    path = os.path.join(directory, "locked")
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0))
    atexit.register(shutil.rmtree, directory, True)
    return path


@dataclass
class Sandbox:
    """One method's confinement: the policy (recorded in the card) and the command lines it implies."""

    tool: Tool
    policy: SandboxPolicy
    view: FileSystemView
    gateway_directory: Path | None = None  # the host directory holding the gateway's Unix socket
    environment: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_plugin(cls, plugin: Path, runtime_paths: list[str], *, network: Network,
                   extra_read_only: list[str] = (), gateway_directory: Path | None = None,  # type: ignore[assignment]
                   hidden: Sequence[str] = ()) -> Sandbox:
        """A sandbox exposing ``plugin`` and ``runtime_paths`` read-only, but not the ``hidden`` files in them;
        raises `SandboxUnavailable`."""
        tool = find_tool()
        for path in extra_read_only:
            if not os.path.exists(path):
                raise SandboxUnavailable(f"--sandbox-ro {path}: no such file or directory")
        plugin = plugin.resolve()
        view = build_view([str(plugin), *runtime_paths, *extra_read_only], network=network == "host",
                          mounted=(GATEWAY_MOUNT,) if network == "gateway" else (), hidden=hidden)
        # the guest's whole environment, recorded in the policy; besides, PWD is the directory `wrap` starts it in
        environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
                       "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        gateway_url = None
        if network == "gateway":
            gateway_url = f"http://{GATEWAY_LISTEN[0]}:{GATEWAY_LISTEN[1]}/v1"
        policy = SandboxPolicy(network=network, network_meaning=NETWORK_MEANING[network], gateway_url=gateway_url,
                               plugin=str(plugin), read_only=view.read_only,
                               extra_read_only=[str(Path(p).resolve()) for p in extra_read_only],
                               locked_names=len(view.locked), environment=sorted(environment),
                               namespaces=[n for n in NAMESPACES if n != "network" or network != "host"])
        return cls(tool=tool, policy=policy, view=view, gateway_directory=gateway_directory,
                   environment=environment)

    def wrap(self, command: list[str], cwd: str | None = None) -> list[str]:
        """``command`` run inside this sandbox (with the gateway forwarder first, for network "gateway")."""
        inner = list(command)
        if self.policy.network == "gateway":
            launcher = str(Path(__file__).with_name("launch.py"))
            host, port = GATEWAY_LISTEN
            inner = [sys.executable, "-I", "-S", launcher, "--forward",
                     f"{host}:{port}={GATEWAY_MOUNT}/{GATEWAY_SOCKET}", "--", *inner]
        workdir = cwd or self.policy.plugin
        if self.tool.name == "unshare":
            from mt_eval.sandbox.unshare import unshare_command

            # (PWD as bubblewrap gives it, which sets it after its chdir: both tools give the same environment)
            return unshare_command(self.tool.path, self.view, network=self.policy.network,
                                   environment={**self.environment, "PWD": workdir},
                                   gateway_directory=self.gateway_directory,
                                   command=inner, workdir=workdir)
        # bwrap's first process stays in the sandbox as its PID 1, and the guest can read its /proc/1/environ:
        # started with no environment, it holds none of the host's secrets (--clearenv clears only the guest's)
        return [shutil.which("env") or "/usr/bin/env", "-i", self.tool.path, *self._bwrap_arguments(workdir),
                "--", *inner]

    def _bwrap_arguments(self, workdir: str) -> list[str]:
        args = list(_BWRAP_BASE)
        if self.policy.network == "host":
            args.append("--share-net")
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # first: a plugin may live under /tmp
        for path in self.view.read_only:
            args += ["--ro-bind", path, path]
        for target, link in self.view.symlinks:
            args += ["--symlink", target, link]
        locked_file = _locked_file() if self.view.locked_files else ""
        for path in self.view.locked:  # (a file as a file: writing it fails "Read-only file system", as it should)
            args += ["--ro-bind", locked_file, path] if path in self.view.locked_files else \
                ["--perms", "0000", "--dir", path]
        if self.gateway_directory is not None:
            args += ["--ro-bind", str(self.gateway_directory), GATEWAY_MOUNT]
        args += ["--remount-ro", "/", "--clearenv"]
        for key, value in self.environment.items():
            args += ["--setenv", key, value]
        return [*args, "--chdir", workdir]
