"""The rules every search applies at each output step: the length limit and the minimum length.

Steps are counted t = 1, 2, ... : the t-th output token, eos included. A sentence may end (emit
eos) only from step min_len + 1, and must end by its length limit: at that step eos is the only
choice, even one the model deems impossible.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

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
