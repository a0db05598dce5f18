"""Host memory that stays bounded: hand the heap's free pages back to the OS after each update.

glibc's malloc serves blocks below its mmap threshold from heaps whose free pages it keeps, and
it raises that threshold (up to 32 MB) each time a large mmapped block is freed. A training
step allocates and frees hundreds of MB of activations whose sizes change with every batch
shape, so the heaps fill with free but resident holes and the process grows step after step.
Measured on the Bible (small preset, bf16, 2 cores): resident memory 2.1 GB after 25 steps and
2.7 GB after 50 without a trim; 0.7 and 1.0 GB with `malloc_trim(0)` after every step, at the
same tokens/s. Where the C library has no `malloc_trim` (macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable


def heap_trimmer() -> Callable[[], None]:
    """A function that returns the C heap's free pages to the OS (or does nothing)."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int

    def release() -> None:
        trim(0)

    return release
