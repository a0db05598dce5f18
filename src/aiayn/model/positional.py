"""Sinusoidal positional encodings (paper section 3.5), for positions of any size."""

from __future__ import annotations

import torch
from torch import Tensor


def inverse_frequencies(d_model: int) -> Tensor:
    """1 / 10000^(2i/d_model) for i < d_model/2: (D/2,), computed in float64, kept in float32."""
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,)
    return (10000.0 ** (-two_i / d_model)).to(torch.float32)


def sinusoidal_encoding(
    positions: Tensor, d_model: int, layout: str = "interleaved", inv_freq: Tensor | None = None
) -> Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...), computed on demand.

    There is no table and so no maximum length.

    Args:
        positions: integer positions, any shape (...,).
        d_model: encoding width D (even).
        layout: "interleaved" (the paper: sin, cos, sin, cos, ...) or "concatenated"
            (fairseq, tensor2tensor, Marian: all sines, then all cosines).
        inv_freq: `inverse_frequencies(d_model)` made beforehand, on the right device (the
            model keeps them as a buffer); made here when not given.

    Returns:
        float32 tensor (..., D).
    """
    if inv_freq is None:
        inv_freq = inverse_frequencies(d_model).to(positions.device)  # (D/2,)
    angles = positions.to(torch.float32)[..., None] * inv_freq  # (..., D/2)
    if layout == "interleaved":
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (..., D)
    if layout == "concatenated":
        return torch.cat((angles.sin(), angles.cos()), dim=-1)  # (..., D)
    raise ValueError(f"unknown positional layout {layout!r}; use 'interleaved' or 'concatenated'")
