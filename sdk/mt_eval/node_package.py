"""Files of the Node package (``bridge/node``) that the Python side reads too.

An installed wheel carries them under ``mt_eval/bridge/node/``; a source checkout has them in
``bridge/node/``. ``MT_EVAL_NODE_GUEST`` is not consulted here (see `mt_eval.bridge.runtimes`).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGED = Path(__file__).parent / "bridge" / "node"
_CHECKOUT = Path(__file__).resolve().parents[2] / "bridge" / "node"


def node_package_file(*parts: str) -> Path:
    """``bridge/node/<parts>``: the packaged copy when there is one, else the source tree's."""
    packaged = _PACKAGED.joinpath(*parts)
    return packaged if packaged.exists() else _CHECKOUT.joinpath(*parts)


def generated_file(name: str) -> Path:
    """A file ``mt-eval schemas`` generates into the Node package (``lib/generated/NAME``)."""
    return node_package_file("lib", "generated", name)
