"""A long run's memory kept to what it holds (glibc; elsewhere these do nothing).

glibc serves large buffers (a block of a corpus read from disk, a numpy array) from their own mappings at first,
but raises that threshold each time one is freed, after which buffers of up to 32 MiB come from the heap: the
holes they leave when freed are rarely returned, and a forked scorer counts them too. `large_buffers_mapped`
pins the threshold; `return_freed_memory` gives back what was freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

_M_MMAP_THRESHOLD = -3  # mallopt's parameter numbers (malloc.h)
_MAPPED_FROM = 256 * 1024  # bytes from which a buffer has a mapping of its own


@cache
def _libc() -> Any | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt, libc.malloc_trim  # noqa: B018 (glibc only)
    except (OSError, AttributeError):
        return None
    return libc


def large_buffers_mapped() -> None:
    """From now on, buffers of 256 KiB or more are mapped of their own and unmapped when freed."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MAPPED_FROM)


def return_freed_memory() -> None:
    """Give the memory freed to the C allocator back to the system."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
