"""Files the SDK ships beside its code: the Node package, the method-plugin template, the bridge's conformance
transcripts and the demo (an example method and its corpus).

An installed wheel carries each of them inside the ``mt_eval`` package (``force-include`` in pyproject.toml); a
source checkout has them at the top of the repository. `resource` gives the packaged copy when there is one,
else the checkout's, so every command finds them the same way however the SDK was installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).parent
_CHECKOUT = PACKAGE.parents[1]

# resource → (where a wheel has it, under mt_eval/; where a source checkout has it, under the repository)
_PLACES: dict[str, tuple[str, str]] = {
    "node": ("bridge/node", "bridge/node"),
    "templates": ("templates", "templates"),
    "conformance": ("bridge/vectors", "bridge/vectors/conformance"),
    "demo": ("demo", "examples"),
}


def resource(name: str, *parts: str) -> Path:
    """``parts`` inside the shipped resource ``name`` (one of `_PLACES`): the packaged copy when the SDK was
    installed from a wheel, else the source tree's."""
    packaged, checkout = _PLACES[name]
    inside = PACKAGE.joinpath(packaged, *parts)
    return inside if inside.exists() else _CHECKOUT.joinpath(checkout, *parts)


def node_package_file(*parts: str) -> Path:
    """``bridge/node/<parts>``: a file of the Node package that the Python side reads or runs."""
    return resource("node", *parts)


def generated_file(name: str) -> Path:
    """A file ``mt-eval schemas`` generates into the Node package (``lib/generated/NAME``)."""
    return node_package_file("lib", "generated", name)


def demo_method() -> Path:
    """The method ``mt-eval run --demo`` evaluates."""
    return resource("demo", "lexicon-eng-spa")


def demo_corpus() -> Path:
    """The corpus ``mt-eval run --demo`` evaluates it on."""
    return resource("demo", "data", "eng-spa-demo.json")


def shipped_corpus_copies() -> list[Path]:
    """Every copy of the demo corpus this installation holds where a Python runtime could read it: the one
    `demo_corpus` gives, the packaged one, and one a ``site-packages`` directory keeps beside an editable install.
    A sandboxed method is shown the runtime read-only, so the sandbox locks these: their references are a
    corpus's."""
    places = [demo_corpus(), PACKAGE / "demo" / "data" / "eng-spa-demo.json",
              *(Path(entry, "mt_eval", "demo", "data", "eng-spa-demo.json")
                for entry in sys.path if entry and os.path.isabs(entry))]
    return sorted({place.resolve() for place in places if place.is_file()})
