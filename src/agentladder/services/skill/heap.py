"""The C heap's free pages handed back to the system after a fit's large steps.

numpy takes an array's memory from the C allocator. glibc's keeps what is freed below the
heap's top in the process (and, once arrays of some megabytes were freed, takes arrays up
to that size from the heap rather than mapping them apart), so the pages a fit's log read
and rounds freed stay resident: a fit of 1,000,000 judgments was 272 MB resident after
the log was read, its table 33 MB (``docs/benchmarks.md``, "Import memory"). glibc's
``malloc_trim(0)`` returns every free page of the heap; elsewhere (another C library)
nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import cache

__all__ = ["release_freed"]


@cache
def _trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_freed() -> bool:
    """Hand the heap's free pages back to the system; whether the C library could."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
