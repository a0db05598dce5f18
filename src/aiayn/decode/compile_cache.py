"""Compiled decoder steps on disk: built once by AOTInductor, named by all that shapes them,
loaded again in a moment by later processes.

Compiling takes 15-25 s per beam width on a 2-core CPU. The result is kept on disk
(`default_cache_dir()`, by default `$XDG_CACHE_HOME/aiayn/compiled`), named by a hash of the
weights, the precision, the beam width, the code, PyTorch, the C++ compiler and the CPU's
instruction sets. The files are shared libraries this process built; load only a cache
directory you trust, as you would a Python package.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor
from torch.export import Dim

from aiayn.model import Transformer

if TYPE_CHECKING:
    from aiayn.decode.compiled import DecoderStep

LARGEST = 1 << 16  # the largest batch, source length and capacity the compiled step accepts


def default_cache_dir() -> Path:
    """Where compiled steps are kept: $AIAYN_COMPILE_CACHE, or $XDG_CACHE_HOME/aiayn/compiled."""
    if "AIAYN_COMPILE_CACHE" in os.environ:
        return Path(os.environ["AIAYN_COMPILE_CACHE"])
    return cache_home() / "compiled"


def cache_home() -> Path:
    """aiayn's own cache: $XDG_CACHE_HOME/aiayn, or ~/.cache/aiayn."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aiayn"


def step_digest(model: Transformer, precision: str) -> str:
    """A name for the compiled steps of `model` in `precision`: a hash of everything that shapes
    them (the weights, the code, the precision, PyTorch, the compiler and the CPU it targets)."""
    digest = hashlib.sha256(build_environment().encode())
    digest.update(f"{precision} {model.cfg}".encode())
    for source in sorted(code_files()):
        digest.update(source.read_bytes())
    for key, value in model.state_dict().items():
        digest.update(key.encode())
        digest.update(value.detach().contiguous().view(torch.uint8).numpy())
    return digest.hexdigest()[:24]


def code_files() -> list[Path]:
    """The code a compiled step runs: a change to any of it is a new compiled step."""
    package = Path(__file__).resolve().parent.parent
    rooms = ("model/*.py", "config/*.py", "decode/**/*.py", "decode/**/*.cpp")
    return [path for room in rooms for path in package.glob(room)]


def cxx() -> str:
    """The C++ compiler inductor builds with."""
    return os.environ.get("CXX", "g++")


def build_environment() -> str:
    """PyTorch, the C++ compiler and the CPU's instruction sets: inductor compiles for the
    CPU it runs on (-march=native), so a step built on one CPU may not run on another."""
    compiler = cxx()
    try:
        version = subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, timeout=30
        ).stdout.splitlines()[:1]
    except (OSError, subprocess.SubprocessError):
        version = []
    flags = next(
        (line for line in cpu_info().splitlines() if line.startswith(("flags", "Features"))), ""
    )
    return f"{torch.__version__} {compiler} {version} {platform.machine()} {flags}"


def cpu_info() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor()


def compile_step(step: DecoderStep, path: Path) -> Callable[..., Tensor]:
    """`step` compiled by AOTInductor, or loaded from `path` if it was compiled before."""
    call = compile_module(step, example_inputs(step), step_shapes(step), path)
    return lambda *args: call(*args)[0]


def compile_module(
    module: torch.nn.Module, example: tuple, shapes: tuple, path: Path
) -> Callable[..., list[Tensor]]:
    """`module` exported on `example` with `shapes` (`torch.export`'s dynamic_shapes) and
    compiled by AOTInductor, or loaded from `path` if it was compiled before: a function of
    its forward's arguments returning its outputs as a list."""
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "isinstance.treespec, LeafSpec", FutureWarning)
        if path.is_file():
            try:
                return flat_call(torch._inductor.aoti_load_package(str(path)))
            except Exception:  # a damaged or foreign file: compile it again
                with contextlib.suppress(OSError):  # a read-only cache: write will say so
                    path.unlink()
        return flat_call(build(module, example, shapes, path))


def build(module: torch.nn.Module, example: tuple, shapes: tuple, path: Path):
    """Export `module` with dynamic shapes, compile it into a package at `path`, load it."""
    compiler = cxx()
    if shutil.which(compiler) is None:
        raise OSError(
            f"--compile needs a C++ compiler and {compiler!r} is not on the PATH: install one "
            "(Debian: apt-get install g++) or decode without --compile"
        )
    # while_loop's body goes through dynamo, which keeps it by its code object: a second
    # export of the same body (another cut) would see the first one's shapes and guard
    # against them; forget them
    torch._dynamo.reset()
    exported = torch.export.export(module, example, dynamic_shapes=shapes)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        built = torch._inductor.aoti_compile_and_package(
            exported,
            package_path=str(Path(tmp) / path.name),
            inductor_configs={"freezing": True},  # weights as constants, pre-packed
        )
        os.replace(built, path)  # whole, or not at all
    return torch._inductor.aoti_load_package(str(path))


def step_shapes(step: DecoderStep) -> tuple[Any, ...]:
    """The dynamic shapes of `DecoderStep.forward`'s arguments: rows, capacity, source length."""
    K = step.group
    B, C = (Dim(name, min=1, max=LARGEST) for name in "BC")
    # The source length as a hint, not a named Dim: repeating each source's keys for its
    # beams makes guards (min(S, K*S) == S) that torch 2.11 cannot prove of a named Dim and
    # refuses; under torch 2.13 the compiled code is the same either way.
    S = Dim.DYNAMIC(min=1, max=LARGEST)
    rows = B * K if K > 1 else B
    per_layer = [{0: rows, 2: C}] * step.model.cfg.n_decoder_layers
    history = {0: rows, 1: C} if K > 1 else None
    return (  # per argument of DecoderStep.forward
        {0: rows},
        {},
        per_layer,
        per_layer,
        {1: B, 3: S},
        {1: B, 3: S},
        {0: B, 3: S},
        history,
    )


def flat_call(package) -> Callable[..., list[Tensor]]:
    """The loaded package as a function of its module's arguments, which hands their tensors
    to the compiled code in order. (The package's own call reads its input and output layouts
    from JSON at every call: 50 us a step, a sixth of a batch-1 step.)"""

    def call(*args) -> list[Tensor]:
        flat = [a for arg in args for a in (arg if isinstance(arg, list) else [arg])]
        return package.loader.boxed_run([a for a in flat if a is not None])

    return call


def example_inputs(step: DecoderStep) -> tuple:
    """Inputs to export the step with: two sources, three source positions and three cached
    steps (sizes of 0 or 1 would be taken for constants)."""
    cfg, K = step.model.cfg, step.group
    H, Dh, N = cfg.n_heads, cfg.d_model // cfg.n_heads, cfg.n_decoder_layers
    dtype = step.model.src_embed.weight.dtype
    B, S, C = 2, 3, 3
    return (
        torch.full((B * K, 1), cfg.bos_id, dtype=torch.long),
        torch.zeros(1, dtype=torch.long),
        [torch.zeros(B * K, H, C, Dh, dtype=dtype) for _ in range(N)],
        [torch.zeros(B * K, H, C, Dh, dtype=dtype) for _ in range(N)],
        torch.zeros(N, B, H, S, Dh, dtype=dtype),
        torch.zeros(N, B, H, S, Dh, dtype=dtype),
        torch.ones(B, 1, 1, S, dtype=torch.bool),
        torch.arange(B * K)[:, None].expand(B * K, C).contiguous() if K > 1 else None,
    )
