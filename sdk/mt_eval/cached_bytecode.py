"""A plugin's cached bytecode (``__pycache__/X.cpython-311.pyc``) cut short, by a full disk or a file-size limit:
found in the failure of the import that read it, removed and said, and its module imported from the source
(`mt_eval.plugin_import`)."""

from __future__ import annotations

import importlib.machinery
import sys
import traceback
from pathlib import Path
from types import CodeType


class DamagedBytecode(Exception):
    """An import failed on cached bytecode (``__pycache__/X.cpython-311.pyc``) that is cut short: Python keeps a
    .pyc whose writing a full disk or a file-size limit stopped, and every later import of its module fails with
    ``EOFError: marshal data too short`` (or ``ValueError: bad marshal data``)."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__(", ".join(map(str, files)))
        self.files = files


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from its source, neither reading nor writing its cached bytecode."""

    def get_code(self, fullname: str) -> CodeType:
        return self.source_to_code(self.get_data(self.path), self.path)


def damaged_bytecode(exc: BaseException) -> list[tuple[Path, Path]]:
    """(source, cached bytecode) of each module whose .pyc the import that raised ``exc`` could not unmarshal:
    the frames of importlib that loaded it name both; a .pyc is counted only when it is indeed unreadable."""
    if not isinstance(exc, (EOFError, ValueError)):
        return []
    found = []
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        source, cached = frame.f_locals.get("source_path"), frame.f_locals.get("bytecode_path")
        if ("importlib" in frame.f_code.co_filename and isinstance(source, str) and isinstance(cached, str)
                and _unreadable_bytecode(Path(cached)) and (Path(source), Path(cached)) not in found):
            found.append((Path(source), Path(cached)))
    return found


def _unreadable_bytecode(cached: Path) -> bool:
    import marshal

    try:
        marshal.loads(cached.read_bytes()[16:])  # (after the header: magic number, flags, source's time and size)
    except (EOFError, ValueError, TypeError):
        return True
    except OSError:
        return False
    return False


def set_aside(files: list[Path]) -> None:
    """Remove each damaged .pyc (only it) and say so; the import is then made from the source."""
    for cached in files:
        try:
            cached.unlink()
            done = "removed it, and imported its module from the source"
        except OSError as exc:
            done = (f"imported its module from the source (it could not be removed: {exc.strerror}); delete it (or "
                    f"the {cached.parent} directory) to stop this warning")
        print(f"mt-eval: warning: the cached bytecode {cached} was damaged (cut short, e.g. by a full disk): {done}",
              file=sys.stderr, flush=True)
