"""Whether Debian's Apertium and its eng-spa data are here (the tests that need them skip otherwise)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DATADIR = Path(os.environ.get("APERTIUM_DATADIR") or "/usr/share/apertium")


def apertium_missing() -> str | None:
    """Why the Apertium tests cannot run here, or None when they can."""
    for program in ("apertium", "apertium-destxt", "apertium-retxt", "apertium-wblank-mode"):
        if shutil.which(program) is None:
            return f"{program} is not installed (Debian: apt-get install apertium apertium-eng-spa)"
    for mode in ("eng-spa", "spa-eng"):
        if not (DATADIR / "modes" / f"{mode}.mode").is_file():
            return (f"the Apertium eng-spa data is not installed (no {DATADIR}/modes/{mode}.mode; Debian: "
                    "apt-get install apertium-eng-spa)")
    return None
