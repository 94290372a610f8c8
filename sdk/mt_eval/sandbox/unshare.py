"""The fallback when bubblewrap cannot be used: util-linux ``unshare`` makes the namespaces and
`mt_eval.sandbox.confine` builds the same file-system view inside them."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mt_eval.sandbox.view import FileSystemView

NAMESPACE_FLAGS = ["--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--ipc", "--uts",
                   "--cgroup"]


def probe_unshare(path: str) -> str | None:
    """None when ``unshare`` can make the namespaces a sandbox needs here; else why not."""
    try:
        done = subprocess.run([path, *NAMESPACE_FLAGS, "--net", "true"], capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    if not Path("/usr/bin/setpriv").exists():
        return "util-linux setpriv is missing (it drops the sandbox's privileges)"
    return None if done.returncode == 0 else f"unshare cannot create namespaces here: {done.stderr.strip()}"


@cache
def _mount_point() -> str:
    """An empty host directory each sandbox mounts its own root on (inside its own mount namespace, so the
    directory stays empty on the host and one serves every sandbox of this process); removed at exit."""
    root = tempfile.mkdtemp(prefix="mt-eval-sandbox-root-")
    atexit.register(os.rmdir, root)
    return root


def unshare_command(program: str, view: FileSystemView, *, network: str, environment: dict[str, str],
                    gateway_directory: Path | None, command: list[str], workdir: str) -> list[str]:
    """``command`` confined by util-linux ``unshare`` (``program``) and ``confine.py``: the ``view`` of the file
    system, the ``network`` of the sandbox's policy, its ``environment`` and its gateway socket's directory."""
    root = _mount_point()
    spec = {"root": root, "read_only": view.read_only, "symlinks": view.symlinks, "locked": view.locked,
            "locked_files": sorted(view.locked_files),
            "network": network, "workdir": workdir, "env": environment,
            "gateway": str(gateway_directory) if gateway_directory else None}
    flags = [] if network == "host" else ["--net"]
    confine = str(Path(__file__).with_name("confine.py"))
    return [program, *NAMESPACE_FLAGS, *flags, "--", sys.executable, "-I", "-S", confine, json.dumps(spec), "--",
            *command]
