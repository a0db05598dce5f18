"""The arithmetic a training step runs in: fp32, or bf16/fp16 autocast (mixed precision)."""

from __future__ import annotations

import contextlib

import torch


def precision_context(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """Autocast for bf16/fp16; nothing for fp32."""
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device.type, dtype=dtype)
