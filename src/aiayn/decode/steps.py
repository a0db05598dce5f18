"""The rules every search applies at each output step, and the token-by-token loop that greedy
decoding and sampling share.

Steps are counted t = 1, 2, ... : the t-th output token, eos included. A sentence may end (emit
eos) only from step min_len + 1, and must end by its length limit: at that step eos is the only
choice, even one the model deems impossible.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.model import Transformer

# The score given to an eos the model deems impossible (-inf) where the limit forces it: finite,
# so the sentence still ends, and far below any score a real continuation has.
FORCED_EOS_SCORE = -1e4


def max_lengths(src: Tensor, pad_id: int, max_len_a: float, max_len_b: int) -> Tensor:
    """The paper's output limit, a * source length + b (section 6.1: input length + 50): (B,)."""
    lengths = max_len_a * (src != pad_id).sum(dim=1) + max_len_b  # (B,)
    return lengths.long().clamp(min=1)  # at least room for eos


def apply_rules(
    scores: Tensor, t: int, at_limit: Tensor | None, min_len: int, eos_id: int
) -> Tensor:
    """Scores of the next token (logits or log-probabilities) as the rules allow them at step t.

    Args:
        scores: (R, V), one row per hypothesis.
        at_limit: (R,) bool, True where step t is the row's last allowed step; None when no
            row can be at its limit yet (no host sync to find out).
    Returns:
        (R, V): eos at -inf before step min_len + 1; only eos where at_limit.
    """
    if t <= min_len:
        scores = scores.index_fill(-1, torch.tensor([eos_id], device=scores.device), -math.inf)
    if at_limit is not None and at_limit.any():
        forced = torch.full_like(scores, -math.inf)  # (R, V)
        forced[:, eos_id] = scores[:, eos_id].clamp(min=FORCED_EOS_SCORE)
        scores = torch.where(at_limit[:, None], forced, scores)
    return scores


# (B', V) logits, (B',) batch rows they belong to -> (B',) chosen tokens
Pick = Callable[[Tensor, Tensor], Tensor]


def token_by_token(
    model: Transformer, src: Tensor, pick: Pick, cfg: DecodeConfig
) -> list[list[int]]:
    """One token per step for each sentence, chosen by `pick`, until eos or the length limit.
    Finished sentences leave the batch once they are half of it (until then they are carried
    along, their outputs ignored): each departure re-allocates the cache.

    Args:
        model: in eval mode.
        src: (B, S) source ids ending with eos, right-padded.
    Returns:
        For each sentence, its output ids without bos and eos.
    """
    ids = model.cfg
    limit = max_lengths(src, ids.pad_id, cfg.max_len_a, cfg.max_len_b)  # (B,)
    B, T_max, shortest = src.shape[0], int(limit.max()), int(limit.min())
    out = torch.full((B, T_max), ids.pad_id, dtype=torch.long, device=src.device)  # (B, T)
    cache = model.init_cache(model.encode(src), capacity=T_max)
    active = torch.arange(B, device=src.device)  # (B',) rows in the batch being decoded
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B',) past their eos
    step = torch.full((B, 1), ids.bos_id, dtype=torch.long, device=src.device)  # (B', 1)
    for t in range(1, T_max + 1):
        decoded = model.decode(step, cache=cache)
        at_limit = limit[active] <= t if t >= shortest else None  # (B',)
        logits = apply_rules(decoded.logits[:, -1], t, at_limit, cfg.min_len, ids.eos_id)
        token = pick(logits, active).masked_fill(finished, ids.eos_id)  # (B',)
        out[active, t - 1] = token  # a finished row's output ends at its first eos (strip)
        finished = finished | (token == ids.eos_id)
        n_finished = int(finished.sum())  # the one host sync of a step
        if n_finished == len(finished):
            break
        cache = decoded.cache
        if 2 * n_finished >= len(finished):  # drop finished rows once they are half the batch:
            keep = (~finished).nonzero().squeeze(1)  # (B'',)  fewer, larger steps of the cache
            cache, active, token = cache.reorder(keep), active[keep], token[keep]
            finished = finished[keep]
        step = token[:, None]  # (B', 1)
    return [strip(row, ids.eos_id, ids.pad_id) for row in out.tolist()]


def strip(ids: list[int], eos_id: int, pad_id: int) -> list[int]:
    """Ids up to the first eos (or padding)."""
    for i, token in enumerate(ids):
        if token in (eos_id, pad_id):
            return ids[:i]
    return ids
