"""Sinusoidal positional encodings (paper section 3.5), for positions of any size."""

from __future__ import annotations

import torch
from torch import Tensor


def sinusoidal_encoding(positions: Tensor, d_model: int, layout: str = "interleaved") -> Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...), computed on demand.

    There is no table and so no maximum length.

    Args:
        positions: integer positions, any shape (...,).
        d_model: encoding width D (even).
        layout: "interleaved" (the paper: sin, cos, sin, cos, ...) or "concatenated"
            (fairseq, tensor2tensor, Marian: all sines, then all cosines).

    Returns:
        float32 tensor (..., D).
    """
    # 1 / 10000^(2i/D), computed in float64 on the CPU so that only the product below rounds
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,)
    inv_freq = (10000.0 ** (-two_i / d_model)).to(positions.device, torch.float32)  # (D/2,)
    angles = positions.to(torch.float32)[..., None] * inv_freq  # (..., D/2)
    if layout == "interleaved":
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (..., D)
    if layout == "concatenated":
        return torch.cat((angles.sin(), angles.cos()), dim=-1)  # (..., D)
    raise ValueError(f"unknown positional layout {layout!r}; use 'interleaved' or 'concatenated'")
