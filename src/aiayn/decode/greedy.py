"""Greedy decoding on the key/value cache; finished sentences leave the active batch."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from aiayn.model import Transformer


def max_lengths(src: Tensor, pad_id: int, a: float = 1.0, b: int = 50) -> Tensor:
    """The paper's output limit, a * source length + b (section 6.1: input length + 50): (B,)."""
    return (a * (src != pad_id).sum(dim=1) + b).long().clamp(min=1)  # (B,) at least eos


# (B', V) logits, (B',) batch rows they belong to -> (B',) chosen tokens
Pick = Callable[[Tensor, Tensor], Tensor]


@torch.no_grad()
def greedy_decode(
    model: Transformer, src: Tensor, a: float = 1.0, b: int = 50, min_len: int = 0
) -> list[list[int]]:
    """The most probable token at each step until eos or the length limit.

    Args:
        model: in eval mode.
        src: (B, S) source ids ending with eos, right-padded.
        a, b: at most a * source length + b output tokens, eos included.
        min_len: eos is not allowed before this many output tokens.

    Returns:
        For each sentence, its output ids without bos and eos.
    """
    return token_by_token(model, src, lambda logits, rows: logits.argmax(dim=-1), a, b, min_len)


def token_by_token(
    model: Transformer, src: Tensor, pick: Pick, a: float, b: int, min_len: int = 0
) -> list[list[int]]:
    """One token per step for each sentence, chosen by `pick`, until eos or the length limit;
    finished sentences leave the active batch. Greedy decoding and sampling both run on it."""
    cfg = model.cfg
    limit = max_lengths(src, cfg.pad_id, a, b)  # (B,)
    B, T_max = src.shape[0], int(limit.max())
    out = torch.full((B, T_max), cfg.pad_id, dtype=torch.long, device=src.device)  # (B, T)
    cache = model.init_cache(model.encode(src), capacity=T_max)
    active = torch.arange(B, device=src.device)  # (B',) rows still decoding
    step = torch.full((B, 1), cfg.bos_id, dtype=torch.long, device=src.device)  # (B', 1)
    for t in range(T_max):
        decoded = model.decode(step, cache=cache)
        logits = decoded.logits[:, -1]  # (B', V)
        if t < min_len:
            logits = logits.index_fill(-1, torch.tensor([cfg.eos_id], device=src.device), -math.inf)
        token = pick(logits, active)  # (B',)
        token = torch.where(limit[active] <= t + 1, cfg.eos_id, token)  # the limit ends it
        out[active, t] = token
        going = token != cfg.eos_id  # (B',)
        if not going.any():
            break
        cache = decoded.cache
        if not going.all():
            keep = going.nonzero().squeeze(1)  # (B'',)
            cache, active, token = cache.reorder(keep), active[keep], token[keep]
        step = token[:, None]  # (B', 1)
    return [strip(row, cfg.eos_id, cfg.pad_id) for row in out.tolist()]


def strip(ids: list[int], eos_id: int, pad_id: int) -> list[int]:
    """Ids up to the first eos (or padding)."""
    for i, token in enumerate(ids):
        if token in (eos_id, pad_id):
            return ids[:i]
    return ids
