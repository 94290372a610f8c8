"""Whether a path a plugin names (a string literal) leads outside the plugin directory."""

from __future__ import annotations

import posixpath

# What every sandboxed method has of its own: the private temporary directory and the process's own streams.
# (``/proc/self/root`` is the whole file system seen from the process, and ``/proc/self/cwd`` wherever it runs:
# neither is its own.)
_OWN = ("/tmp", "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/proc/self")
_NOT_OWN = ("/proc/self/root", "/proc/self/cwd")


def outside_reason(path: str | None) -> str | None:
    """Why ``path`` (as written) is outside the plugin directory, or None when it need not be."""
    if not path:
        return None
    if path.startswith("~"):
        return "the user's home directory, outside the plugin directory"
    if path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] in "\\/"):
        if path.startswith("/") and _own(posixpath.normpath(path.replace("\\", "/"))):
            return None
        return "outside the plugin directory"
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        return "climbs out of the directory it is relative to"
    return None


def _own(normal: str) -> bool:
    """Whether the normalised absolute path is in one of the process's own places (`_OWN`), a whole name at a time:
    ``/tmp/x`` is, ``/tmpfoo`` and ``/tmp/../etc`` are not."""
    def under(place: str) -> bool:
        return normal == place or normal.startswith(place + "/")

    return any(under(place) for place in _OWN) and not any(under(place) for place in _NOT_OWN)
