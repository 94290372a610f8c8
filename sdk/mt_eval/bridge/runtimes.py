"""The guest command for each way a plugin can run out of process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

GUEST_SCRIPT = ("bin", "mt-eval-guest.js")


def node_guest_script() -> Path:
    """The Node guest runner: packaged with the SDK, or in the source tree (``MT_EVAL_NODE_GUEST`` overrides)."""
    override = os.environ.get("MT_EVAL_NODE_GUEST")
    if override:
        return Path(override)
    from mt_eval.node_package import node_package_file

    return node_package_file(*GUEST_SCRIPT)


def node_command(directory: Path) -> list[str]:
    """Run a plugin's ``node_entry`` under the Node guest runner (``MT_EVAL_NODE`` picks the node binary)."""
    return [os.environ.get("MT_EVAL_NODE") or "node", str(node_guest_script()), str(directory.resolve())]


def python_command(directory: Path, *, isolated: bool = False) -> list[str]:
    """Run a Python plugin in its own process with ``mt-eval serve`` (``isolated``: Python's ``-I``, so no
    environment variable, user site or working directory changes what is imported)."""
    return [sys.executable, *(["-I"] if isolated else []), "-m", "mt_eval.cli", "serve", str(directory.resolve())]
