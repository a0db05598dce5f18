"""Host memory that stays bounded on batches whose shapes change every step.

Two causes, found by sampling resident memory step by step on the Bible (small preset, bf16,
2 cores, 120 distinct real batches):

1. oneDNN, which runs PyTorch's bf16 matrix products on a CPU, caches a primitive (kernel and
   buffers) for every distinct matrix shape, up to 1,024 of them; a token-budget batch has a new
   (rows, columns) shape almost every step. With a cache of 16 primitives the memory left after
   a step levels off at about 0.7 GB instead of climbing past 1.0 GB, at the same speed.
2. glibc's malloc keeps the free pages of its heaps, and activations of a different size every
   step leave them fragmented: without a trim the process grew past 2 GB in 120 steps and kept
   growing. `malloc_trim(0)` after each update returns the free pages (peak 1.4 GB). It is not
   free: the next step faults those pages in again, about a fifth of a bf16 step's time on the
   2-core EPYC; `TrainConfig.trim_heap=False` trades bounded memory for that speed.
3. Validation was the run's peak (1.6-1.9 GB in a 30-minute run, against 1.4 GB for updates):
   its loss batches and the greedy decoding's changing shapes allocate through the heap's
   scattered free chunks, faulting them in again. A trim before each loss batch and before the
   decoding lowers the loss part's peak by 0.14-0.24 GB. The decoding (decode/steps.py) now
   drops its finished rows only once they are half its batch, not at every eos, so its cache is
   re-allocated a few times instead of dozens: it adds 0.31-0.43 GB above the trimmed process
   instead of 0.45-0.62 (100 steps, a validation every 25).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable

ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
ONEDNN_CACHE_PRIMITIVES = 16


def bound_kernel_cache() -> None:
    """Cap oneDNN's per-shape primitive cache (read when it is first used), unless the user
    set it. Call before the first bf16 matrix product of the process."""
    os.environ.setdefault(ONEDNN_CACHE_ENV, str(ONEDNN_CACHE_PRIMITIVES))


def heap_trimmer(enabled: bool = True) -> Callable[[], None]:
    """A function that returns the C heap's free pages to the OS; one that does nothing when
    not `enabled` (`TrainConfig.trim_heap`) or where there is no malloc_trim."""
    if not enabled:
        return lambda: None
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # macOS, Windows, musl: no malloc_trim
        return lambda: None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int

    def release() -> None:
        trim(0)

    return release
