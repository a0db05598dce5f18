"""The rules every search applies at each output step: the length limit and the minimum length;
and, where asked, no repeated n-gram and no stutter.

Steps are counted t = 1, 2, ... : the t-th output token, eos included. A sentence may end (emit
eos) only from step min_len + 1, and must end by its length limit: at that step eos is the only
choice, even one the model deems impossible. A search given a deadline (the server's budget of
seconds) checks it once per step and stops with `OverBudgetError` when it has passed.
"""

from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F
from torch import Tensor

# The score given to an eos the model deems impossible (-inf) where the limit forces it: finite,
# so the sentence still ends, and far below any score a real continuation has.
FORCED_EOS_SCORE = -1e4


class OverBudgetError(RuntimeError):
    """A search ran past its deadline (`DecodeConfig.deadline`) and stopped."""


def max_lengths(src: Tensor, pad_id: int, max_len_a: float, max_len_b: int, cap: int = 0) -> Tensor:
    """The paper's output limit, a * source length + b (section 6.1: input length + 50), at
    most `cap` where one is given (0: none): (B,)."""
    lengths = max_len_a * (src != pad_id).sum(dim=1) + max_len_b  # (B,)
    return lengths.long().clamp(min=1, max=cap or None)  # at least room for eos


def check_deadline(deadline: float, t: int) -> None:
    """Stop a search at step t once `deadline` (time.monotonic(); 0 = none) has passed."""
    if deadline and time.monotonic() > deadline:
        raise OverBudgetError(f"the search passed its deadline at output step {t}")


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


def block_repeats(scores: Tensor, outputs: Tensor, n: int) -> Tensor:
    """Scores with every token that would repeat an n-gram of its row's output at -inf
    (fairseq's and Hugging Face's no_repeat_ngram_size): where the last n - 1 tokens occurred
    before, the token that followed them then may not follow them now.

    Args:
        scores: (R, V), one row per hypothesis.
        outputs: (R, t) each row's output tokens so far, without bos.
    Returns:
        (R, V); unchanged while the outputs are shorter than n tokens.
    """
    if n < 1 or outputs.shape[1] < n:  # no n-gram yet, so none to repeat
        return scores
    if n == 1:  # no token twice
        seen = torch.full_like(scores, math.inf).scatter_(1, outputs, -math.inf)
        return torch.minimum(scores, seen)
    grams = outputs.unfold(1, n, 1)  # (R, W, n): every n-gram so far
    last = outputs[:, outputs.shape[1] - (n - 1) :]  # (R, n - 1)
    seen = (grams[:, :, :-1] == last[:, None, :]).all(dim=-1)  # (R, W): the same n - 1 before
    banned = torch.where(seen, -math.inf, math.inf).to(scores.dtype)  # (R, W)
    return scores.scatter_reduce(1, grams[:, :, -1], banned, reduce="amin")


STUTTER_UNIT = 3  # the longest unit of pieces the stutter guard watches


def block_stutter(scores: Tensor, outputs: Tensor, copies: int) -> Tensor:
    """Scores with every token that would make a unit of 1 to 3 pieces occur more than `copies`
    times back to back at -inf: the loop inside a word ("mehr|er|er|er|er", "Out|put|put|put")
    that an n-gram ban does not stop before it has happened once, and that would ban every
    legitimate repeat of a word. A unit of L pieces repeated `copies` times and followed by its
    first L - 1 pieces may not be completed again.

    Args:
        scores: (R, V), one row per hypothesis.
        outputs: (R, t) each row's output tokens so far, without bos.
    Returns:
        (R, V); unchanged while no row is long enough to hold such a run.
    """
    if copies < 1:
        return scores
    for L in range(1, STUTTER_UNIT + 1):
        w = L * copies + L - 1  # the run so far: `copies` units and the next one but its last
        if outputs.shape[1] < w:
            break
        tail = outputs[:, outputs.shape[1] - w :]  # (R, w)
        periodic = (tail[:, L:] == tail[:, :-L]).all(dim=1)  # (R,) the same unit throughout
        banned = torch.where(periodic, -math.inf, math.inf).to(scores.dtype)  # (R,)
        scores = scores.scatter_reduce(1, tail[:, L - 1 : L], banned[:, None], reduce="amin")
    return scores


# -- the same guards on a fixed-shape buffer (a compiled loop: `decode.greedy_loop`) ------------


def block_repeats_in(scores: Tensor, outputs: Tensor, t: Tensor, n: int) -> Tensor:
    """`block_repeats` where the outputs so far are the first t - 1 columns of a fixed (R, C)
    buffer (t a 0-dim tensor, step t being chosen): the same bans, with shapes that do not
    change from step to step."""
    if n < 1:
        return scores
    R, C = outputs.shape
    columns = torch.arange(C + n, device=outputs.device)  # (C + n,)
    padded = F.pad(outputs, (0, n))  # (R, C + n): a window of n fits however short C is
    if n == 1:  # no token twice
        banned = torch.where(columns[None, :C] < t - 1, -math.inf, math.inf)  # (1, C)
        return scores.scatter_reduce(1, outputs, banned.expand(R, C).to(scores.dtype), "amin")
    grams = padded.unfold(1, n, 1)  # (R, W, n): every window, W = C + 1
    last = padded.gather(1, (t - n + columns[: n - 1]).clamp(min=0)[None].expand(R, n - 1))
    seen = (grams[:, :, :-1] == last[:, None, :]).all(dim=-1)  # (R, W): the same n - 1 before
    seen = seen & (columns[None, : grams.shape[1]] <= t - 1 - n)  # windows within t - 1
    banned = torch.where(seen, -math.inf, math.inf).to(scores.dtype)  # (R, W)
    return scores.scatter_reduce(1, grams[:, :, -1], banned, reduce="amin")


def block_stutter_in(scores: Tensor, outputs: Tensor, t: Tensor, copies: int) -> Tensor:
    """`block_stutter` where the outputs so far are the first t - 1 columns of a fixed (R, C)
    buffer (see `block_repeats_in`)."""
    if copies < 1:
        return scores
    R = outputs.shape[0]
    for L in range(1, STUTTER_UNIT + 1):
        w = L * copies + L - 1  # the run so far: `copies` units and the next one but its last
        at = (t - 1 - w + torch.arange(w, device=outputs.device)).clamp(min=0)  # (w,)
        tail = outputs.gather(1, at[None].expand(R, w))  # (R, w)
        periodic = (tail[:, L:] == tail[:, :-L]).all(dim=1) & (t - 1 >= w)  # (R,)
        banned = torch.where(periodic, -math.inf, math.inf).to(scores.dtype)  # (R,)
        scores = scores.scatter_reduce(1, tail[:, L - 1 : L], banned[:, None], reduce="amin")
    return scores
