"""The guest command for each way a plugin can run out of process."""

from __future__ import annotations

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
    from mt_eval.node_package import node_package_file

    return node_package_file(*GUEST_SCRIPT)


def node_command(directory: Path, *, entry: str | None = None, name: str | None = None,
                 method_id: str | None = None, implements: Sequence[str] = ()) -> list[str]:
    """Run a plugin's ``node_entry`` under the Node guest runner (``MT_EVAL_NODE`` picks the node binary).

    Given the plugin's ``entry`` (its node_entry) and what its manifest says, the host names the method itself — it
    has checked the plugin's files — and the guest serves the module without reading them again, which is most of
    what its start-up costs; without, the guest reads and checks the plugin directory as this SDK does."""
    node, script = os.environ.get("MT_EVAL_NODE") or "node", str(node_guest_script())
    if entry is None:
        return [node, script, str(directory.resolve())]
    named = [*(["--name", name] if name else []), *(["--method-id", method_id] if method_id else []),
             *(["--implements", ",".join(implements)] if implements else [])]
    return [node, script, "--module", str((directory / entry).resolve()), *named]


def python_command(directory: Path, *, isolated: bool = False) -> list[str]:
    """Run a Python plugin in its own process with ``mt-eval serve`` (``isolated``: Python's ``-I``, so no
    environment variable, user site or working directory changes what is imported)."""
    return [sys.executable, *(["-I"] if isolated else []), "-m", "mt_eval.cli", "serve", str(directory.resolve())]
