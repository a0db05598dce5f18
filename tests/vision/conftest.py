"""Shared helpers of the vision tests: copying weights into Hugging Face reference models."""

from __future__ import annotations

import torch
from torch import nn

from aiayn.model.attention import MultiHeadAttention
from aiayn.model.layers import FeedForward


def copy_attention(
    ours: MultiHeadAttention, q: nn.Linear, k: nn.Linear, v: nn.Linear, o: nn.Linear
) -> None:
    """Our stacked W^Q, W^K, W^V and W^O into a reference's four projections."""
    with torch.no_grad():
        for ref, w, b in zip(
            (q, k, v), ours.w_qkv.weight.chunk(3), ours.w_qkv.bias.chunk(3), strict=True
        ):
            ref.weight.copy_(w)
            ref.bias.copy_(b)
        o.load_state_dict(ours.w_o.state_dict())


def copy_ffn(ours: FeedForward, fc1: nn.Linear, fc2: nn.Linear) -> None:
    fc1.load_state_dict(ours.w_1.state_dict())
    fc2.load_state_dict(ours.w_2.state_dict())
