"""The guest command for each way a plugin can run out of process."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path

GUEST_SCRIPT = ("bin", "mt-eval-guest.js")


def node_guest_script() -> Path:
    """The Node guest runner: packaged with the SDK, or in the source tree (``MT_EVAL_NODE_GUEST`` overrides)."""
    override = os.environ.get("MT_EVAL_NODE_GUEST")
    if override:
        return Path(override)
    from mt_eval.resources import node_package_file

    return node_package_file(*GUEST_SCRIPT)


def node_executable() -> str:
    """The ``node`` to run Node guests with (``MT_EVAL_NODE`` overrides)."""
    return os.environ.get("MT_EVAL_NODE") or "node"


def cannot_run(program: str, exc: OSError) -> str:
    """Why a guest's program could not be started; for the node that runs Node entries, with how to get one."""
    why = exc.strerror or str(exc)
    if program != node_executable():
        return f"cannot start guest {program!r}: {why}"
    if os.environ.get("MT_EVAL_NODE"):
        return (f"cannot start guest {program!r} (the node MT_EVAL_NODE names): {why}; set MT_EVAL_NODE to the "
                "path of Node.js 20 or later, or unset it to use node on PATH")
    if exc.errno == errno.ENOENT:
        why = f"Node.js is not installed, or not on PATH ({why})"
    return (f"cannot start guest {program!r}: {why}; install Node.js 20 or later, or set MT_EVAL_NODE to the path "
            "of its node")


def node_command(directory: Path, *, entry: str | None = None, name: str | None = None,
                 method_id: str | None = None, implements: Sequence[str] = ()) -> list[str]:
    """Run a plugin's ``node_entry`` under the Node guest runner (``MT_EVAL_NODE`` picks the node binary).

    Given the plugin's ``entry`` (its node_entry) and what its manifest says, the host names the method itself — it
    has checked the plugin's files — and the guest serves the module without reading them again, which is most of
    what its start-up costs; without, the guest reads and checks the plugin directory as this SDK does."""
    node, script = node_executable(), str(node_guest_script())
    if entry is None:
        return [node, script, str(directory.resolve())]
    named = [*(["--name", name] if name else []), *(["--method-id", method_id] if method_id else []),
             *(["--implements", ",".join(implements)] if implements else [])]
    return [node, script, "--module", str((directory / entry).resolve()), *named]


def python_command(directory: Path, *, isolated: bool = False) -> list[str]:
    """Run a Python plugin in its own process with ``mt-eval serve`` (``isolated``: Python's ``-I``, so no
    environment variable, user site or working directory changes what is imported)."""
    return [sys.executable, *(["-I"] if isolated else []), "-m", "mt_eval.cli", "serve", str(directory.resolve())]
