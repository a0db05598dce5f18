"""Shared test helpers: tiny seeded models and padded batches."""

from __future__ import annotations

import pytest
import torch

from aiayn import Transformer, preset
from aiayn.config import ModelConfig


def padded_batch(lengths: list[int], cfg: ModelConfig, seed: int, start_with_bos: bool = False):
    """Right-padded random token ids (B, max(lengths)); real tokens avoid the special ids."""
    g = torch.Generator().manual_seed(seed)
    L = max(lengths)
    tokens = torch.randint(3, cfg.vocab_size, (len(lengths), L), generator=g)
    for i, n in enumerate(lengths):
        tokens[i, n:] = cfg.pad_id
    if start_with_bos:
        tokens[:, 0] = cfg.bos_id
    return tokens


def tiny_model(seed: int = 0, **changes) -> Transformer:
    """A tiny Transformer in eval mode (no dropout), seeded."""
    torch.manual_seed(seed)
    return Transformer(preset("tiny", **changes)).eval()


def copy_linear(dst, src) -> None:
    """Copy weight and bias between two modules that have both (Linear, LayerNorm)."""
    dst.weight.copy_(src.weight)
    dst.bias.copy_(src.bias)


@torch.no_grad()
def perturb_vectors(model: Transformer, scale: float = 0.1) -> None:
    """Move biases and LayerNorm gains off their initial 0 and 1, so a swapped one would show."""
    for p in model.parameters():
        if p.ndim == 1:
            p.add_(torch.randn_like(p) * scale)


@pytest.fixture(params=[False, True], ids=["post-norm", "pre-norm"])
def norm_first(request) -> bool:
    return request.param
