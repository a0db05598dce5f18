"""int8-by-int8 products that a compiled step can call (`int8_kernel.cpp`).

At batch 1 a compiled int8 step is seven one-row products, and PyTorch's fastest for int8
weights (`_weight_int8pack_mm`, bf16 activations) takes about half the step; none of its int8-by-
int8 products is faster at one row (experiments/decode_compile). This is the product CTranslate2
runs, as a PyTorch operator (`torch.ops.aiayn_int8.int8_mm`) that `torch.export` keeps and
AOTInductor calls: each row of x quantized to int8 on the fly, weights packed once.

It is built on first use with the C++ compiler `--compile` already needs, for the CPU it runs on,
and kept in aiayn's cache (`~/.cache/aiayn/kernels`), one file per CPU, compiler, PyTorch and
source. Where it cannot be built, or `AIAYN_INT8_KERNEL=0`, the compiled step keeps PyTorch's
weight-only `_weight_int8pack_mm`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import warnings
from pathlib import Path
from unittest import mock

import torch
from torch import Tensor

from aiayn.decode.compile_cache import build_environment, cache_home, cxx

SOURCE = Path(__file__).with_suffix(".cpp")
ROWS = 16  # the outputs of one packed block: a packed matrix's rows slice by whole blocks


def enabled() -> bool:
    """Whether the kernel is wanted: `AIAYN_INT8_KERNEL=0` keeps PyTorch's weight-only one."""
    return os.environ.get("AIAYN_INT8_KERNEL", "1") != "0"


@functools.cache
def load() -> bool:
    """Load the kernel, built first where this CPU, compiler and PyTorch have none yet; False
    where it cannot be built, with a warning saying why (`_weight_int8pack_mm` is used then)."""
    digest = hashlib.sha256(build_environment().encode() + SOURCE.read_bytes()).hexdigest()[:16]
    name = f"aiayn_int8_{digest}"
    library = cache_home() / "kernels" / f"{name}.so"
    try:
        if library.is_file():
            torch.ops.load_library(str(library))
        else:
            build(name, library)
    except Exception as error:  # no compiler, headers or room: keep PyTorch's kernel
        warnings.warn(f"aiayn's int8 kernel was not built ({error}); using PyTorch's", stacklevel=2)
        return False
    register_shapes()
    return True


def build(name: str, library: Path) -> None:
    """Compile the kernel in a directory of its own, load it, and move it to `library` (a
    rename: another process building it at the same time leaves a whole file either way)."""
    from torch.utils.cpp_extension import load as compile_and_load

    print("aiayn: building the int8 kernel for this CPU (once, about a minute)", file=sys.stderr)
    library.parent.mkdir(parents=True, exist_ok=True)
    # the compiler inductor uses, and ninja (a dependency) from beside this interpreter, which
    # need not be on the PATH: for this build only
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    build_env = {"CXX": cxx(), "PATH": path}
    with (
        mock.patch.dict(os.environ, build_env),
        tempfile.TemporaryDirectory(dir=library.parent) as tmp,
    ):
        compile_and_load(
            name=name,
            sources=[str(SOURCE)],
            extra_cflags=["-O3", "-march=native", "-fopenmp"],
            extra_ldflags=["-fopenmp"],
            build_directory=tmp,
            is_python_module=False,
        )
        os.replace(Path(tmp) / f"{name}.so", library)


def register_shapes() -> None:
    """The operator's output shape for `torch.export` (which traces without running it)."""

    @torch.library.register_fake("aiayn_int8::int8_mm")
    def _(x: Tensor, packed: Tensor, scale: Tensor) -> Tensor:
        return x.new_empty(x.shape[0], scale.shape[0])


def available() -> bool:
    """Whether compiled int8 steps multiply with this kernel (wanted, and built here)."""
    return enabled() and load()


def pack(weight: Tensor) -> Tensor:
    """(N, K) int8 -> (N', K') int8 in (16, 4) blocks, as `int8_mm` reads it: N' and K' are N
    and K rounded up to 16 and 4, and rows 16i..16i+15 hold outputs 16i..16i+15."""
    return torch.ops.aiayn_int8.pack(weight)


def int8_mm(x: Tensor, packed: Tensor, scale: Tensor) -> Tensor:
    """(M, K) bf16 by a packed (N, K) int8 matrix with (N,) bf16 scales -> (M, N) bf16."""
    return torch.ops.aiayn_int8.int8_mm(x, packed, scale)
