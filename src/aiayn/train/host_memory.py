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
   decoding lowers the loss part's peak by 0.14-0.24 GB. The decoding (decode/token_by_token.py) now
   drops its finished rows only once they are half its batch, not at every eos, so its cache is
   re-allocated a few times instead of dozens: it adds 0.31-0.43 GB above the trimmed process
   instead of 0.45-0.62 (100 steps, a validation every 25).
4. The trim's cost is the reason `aiayn train` runs on tcmalloc where the system has it (Debian
   and Ubuntu: `libtcmalloc-minimal4`, which `make` installs when run as root), as PyTorch's own
   CPU launcher offers (`torch.backends.xeon.run_cpu --enable-tcmalloc`): its size classes reuse
   freed memory across batches of changing shapes without growing, so no trim is needed. The
   command starts itself again with the library preloaded (an allocator cannot be swapped in a
   running process); `AIAYN_ALLOCATOR=system` keeps glibc's. Measured on 150-300 real Bible
   batches (bf16, small preset, 2-core AMD EPYC): glibc with a trim per update about 4,200
   target tokens/s and a peak of 1.18 GiB; glibc untrimmed 5,500 and 1.7 GiB, still growing;
   tcmalloc 5,300 and 1.14 GiB, level.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Callable, Sequence

ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
ONEDNN_CACHE_PRIMITIVES = 16
ALLOCATOR_ENV = "AIAYN_ALLOCATOR"  # "system": keep glibc's malloc; unset: tcmalloc if found
_RESTARTED_ENV = "AIAYN_ALLOCATOR_RESTARTED"  # set on the restart: never loop
TCMALLOC = ("tcmalloc_minimal", "tcmalloc")  # the library names ctypes.util.find_library takes
INSTALL_HINT = "on Debian or Ubuntu: apt-get install libtcmalloc-minimal4"


def bound_kernel_cache() -> None:
    """Cap oneDNN's per-shape primitive cache (read when it is first used), unless the user
    set it. Call before the first bf16 matrix product of the process."""
    os.environ.setdefault(ONEDNN_CACHE_ENV, str(ONEDNN_CACHE_PRIMITIVES))


def tcmalloc_loaded() -> bool:
    """Whether this process allocates through tcmalloc (preloaded)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            return any("libtcmalloc" in line for line in maps)
    except OSError:  # no /proc: not Linux
        return False


def find_tcmalloc() -> str | None:
    """The tcmalloc library's file name, as the dynamic loader finds it; None if not installed."""
    for name in TCMALLOC:
        found = ctypes.util.find_library(name)
        if found:
            return found
    return None


def allocator() -> str:
    """The allocator this process runs on: "tcmalloc" or "system" (in a run's summary)."""
    return "tcmalloc" if tcmalloc_loaded() else "system"


def restart_with_tcmalloc(argv: Sequence[str]) -> None:
    """Start this program again (same process id, same arguments) with tcmalloc preloaded, if
    it is installed and not already in use; `AIAYN_ALLOCATOR=system` or a failed earlier try
    keeps the running process. Returns only when it does not restart; says why on stderr when
    tcmalloc is missing, so that the slower path is never silent."""
    env = os.environ
    if not sys.platform.startswith("linux") or env.get(ALLOCATOR_ENV) == "system":
        return
    if tcmalloc_loaded() or env.get(_RESTARTED_ENV):
        return
    library = find_tcmalloc()
    if library is None:
        print(
            "aiayn: tcmalloc is not installed; training keeps the system malloc and trims its "
            f"heap after every update, about a fifth slower on a CPU ({INSTALL_HINT}; set "
            f"{ALLOCATOR_ENV}=system to silence this)",
            file=sys.stderr,
        )
        return
    preload = " ".join(p for p in (env.get("LD_PRELOAD", ""), library) if p)
    os.execve(sys.executable, list(argv), {**env, "LD_PRELOAD": preload, _RESTARTED_ENV: "1"})


def heap_trimmer(enabled: bool = True) -> Callable[[], None]:
    """A function that returns the C heap's free pages to the OS; one that does nothing when
    not `enabled` (`TrainConfig.trim_heap`), under tcmalloc (which needs no trim: its own
    heap is not glibc's) or where there is no malloc_trim."""
    if not enabled or tcmalloc_loaded():
        return lambda: None
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # macOS, Windows, musl: no malloc_trim
        return lambda: None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int

    def release() -> None:
        trim(0)

    return release
