"""The one place masks are built. Convention: boolean, True = may attend, broadcastable to
(B, H, T, S). Masked scores become -inf inside attention (never -1e9, which overflows in fp16)."""

from __future__ import annotations

import torch
from torch import Tensor


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Keys that are real tokens: (B, S) ids -> (B, 1, 1, S)."""
    return (tokens != pad_id)[:, None, None, :]  # (B, 1, 1, S)


def causal_mask(n_new: int, n_past: int, device: torch.device | None = None) -> Tensor:
    """Queries at positions n_past..n_past+n_new-1 see keys at positions <= their own.

    Returns:
        (T, P + T) with T = n_new, P = n_past; broadcasts against (B, H, T, P + T).
    """
    query_pos = torch.arange(n_past, n_past + n_new, device=device)[:, None]  # (T, 1)
    key_pos = torch.arange(n_past + n_new, device=device)[None, :]  # (1, P+T)
    return key_pos <= query_pos  # (T, P+T)


def decoder_mask(n_new: int, n_past: int, device: torch.device | None = None):
    """Decoder self-attention for T new steps after P cached ones: (mask, is_causal).

    P = 0: plain causal attention, left to the fused kernel (is_causal, no mask tensor).
    T = 1: the one new step may see every earlier one: no mask at all.
    Otherwise: an explicit (T, P + T) causal mask.
    """
    if n_past == 0:
        return None, n_new > 1
    if n_new == 1:
        return None, False
    return causal_mask(n_new, n_past, device), False
