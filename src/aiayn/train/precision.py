"""The arithmetic a training step runs in: fp32, or bf16/fp16 autocast (mixed precision), and
the recipe's bf16 kept only where the CPU computes it fast."""

from __future__ import annotations

import contextlib
import platform

import torch

from aiayn.config import TrainConfig

X86 = {"x86_64", "amd64", "i386", "i686", "x86"}


def precision_context(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """Autocast for bf16/fp16; nothing for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device.type, dtype=dtype)


def cpu_has_bf16_kernels() -> bool | None:
    """Whether this CPU has what PyTorch's fast bf16 matrix products (oneDNN) need: AVX-512, or
    AVX512-BF16 or AMX that compute bf16 natively. Without them PyTorch falls back to a
    reference path, about 30x slower than fp32 on an AVX2 machine (benchmarks/README.md, "train").
    None where this cannot be told (a CPU that is not x86)."""
    if platform.machine().lower() not in X86:
        return None
    probes = ("_is_avx512_supported", "_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in probes)


def precision_for(
    cfg: TrainConfig, device: torch.device, named: bool
) -> tuple[TrainConfig, str | None]:
    """`cfg` with the precision this device should train in, and the line that says why where it
    differs: a recipe's bf16 becomes fp32 on a CPU without bf16 kernels. Asked for by name
    (`named`: --precision or --set precision=), bf16 is kept."""
    if cfg.precision != "bf16" or device.type != "cpu" or named:
        return cfg, None
    if cpu_has_bf16_kernels() is not False:
        return cfg, None
    note = (
        "precision: fp32, not the recipe's bf16: this CPU has no AVX-512, and PyTorch's bf16 "
        "runs about 30x slower than fp32 without it (--precision bf16 insists)"
    )
    return cfg.replace(precision="fp32"), note
