"""Positions of image tokens: DETR's 2-D version of the paper's sinusoids (section 3.5)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from aiayn.model.positional import sinusoidal_encoding


def sine_positions_2d(height: int, width: int, d_model: int) -> Tensor:
    """Half the channels encode the row, half the column, each with the paper's interleaved
    sinusoids of a position normalized to (0, 2*pi] (DETR's `normalize=True`).

    Returns:
        (height * width, d_model), rows first (the order of a flattened (G, G) grid).
    """
    eps = 1e-6  # DETR's, so that the positions match its reference to the last bit
    rows = torch.arange(1, height + 1, dtype=torch.float32) / (height + eps) * 2 * math.pi
    cols = torch.arange(1, width + 1, dtype=torch.float32) / (width + eps) * 2 * math.pi
    pe_rows = sinusoidal_encoding(rows, d_model // 2)  # (Hg, D/2)
    pe_cols = sinusoidal_encoding(cols, d_model // 2)  # (Wg, D/2)
    grid = torch.cat(
        (
            pe_rows[:, None, :].expand(height, width, -1),  # (Hg, Wg, D/2)
            pe_cols[None, :, :].expand(height, width, -1),  # (Hg, Wg, D/2)
        ),
        dim=-1,
    )  # (Hg, Wg, D)
    return grid.reshape(height * width, d_model)  # (N, D)
