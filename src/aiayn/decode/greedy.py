"""Greedy decoding on the key/value cache: the most probable token at each step."""

from __future__ import annotations

import torch
from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.decode.steps import token_by_token
from aiayn.model import Transformer


@torch.no_grad()
def greedy_decode(
    model: Transformer, src: Tensor, cfg: DecodeConfig = DecodeConfig()
) -> list[list[int]]:
    """The most probable token at each step until eos or the length limit.

    Args:
        model: in eval mode.
        src: (B, S) source ids ending with eos, right-padded.
        cfg: its max_len_a, max_len_b and min_len are used.

    Returns:
        For each sentence, its output ids without bos and eos.
    """
    return token_by_token(model, src, lambda logits, rows: logits.argmax(dim=-1), cfg)
