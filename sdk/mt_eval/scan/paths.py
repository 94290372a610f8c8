"""Whether a path written in a method's code leaves the plugin directory."""

from __future__ import annotations


def outside_reason(path: str | None) -> str | None:
    """Why ``path`` (as written) is outside the plugin directory, or None when it need not be."""
    if not path:
        return None
    if path.startswith("~"):
        return "the user's home directory, outside the plugin directory"
    if path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] in "\\/"):
        if path.startswith(("/tmp", "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/proc/self")):
            return None  # the private temporary directory and the process's own streams
        return "outside the plugin directory"
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        return "climbs out of the directory it is relative to"
    return None
