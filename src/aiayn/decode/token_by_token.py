"""The token-by-token loop that greedy decoding and sampling share: one token per sentence per
step, chosen by a `Pick`, under the rules of `decode.rules`; and, where asked, each sentence's
log P(Y|X) as the search found it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.decode.protocols import CacheT, DecodingModel
from aiayn.decode.rules import (
    FORCED_EOS_SCORE,
    apply_rules,
    block_repeats,
    block_stutter,
    check_deadline,
    max_lengths,
)
from aiayn.model.outputs import Decoded

# (B', V) logits, (B',) batch rows they belong to -> (B',) chosen tokens
Pick = Callable[[Tensor, Tensor], Tensor]


class Walked(NamedTuple):
    """What `token_by_token` found for each sentence."""

    tokens: list[list[int]]  # its output ids without bos and eos
    log_probs: list[float] | None  # log P(Y|X), eos included (None: not asked for)


def token_by_token(
    model: DecodingModel[CacheT], src: Tensor, pick: Pick, cfg: DecodeConfig, scored: bool = False
) -> Walked:
    """One token per step for each sentence, chosen by `pick`, until eos or the length limit.
    Finished sentences leave the batch once they are half of it (until then they are carried
    along, their outputs ignored): each departure re-allocates the cache.

    Args:
        model: in eval mode.
        src: (B, S) source ids ending with eos, right-padded.
        scored: also sum each sentence's log-probabilities of its chosen tokens, as the model
            gave them before the rules (an eos forced at the limit counts at least
            FORCED_EOS_SCORE, as in beam search): one log-sum-exp per step, none with a
            normalized step (compiled, shortlisted).
    """
    special = model.cfg  # the model's pad, bos and eos ids
    limit = max_lengths(src, special.pad_id, cfg.max_len_a, cfg.max_len_b, cfg.max_output_tokens)
    B, T_max, shortest = src.shape[0], int(limit.max()), int(limit.min())
    out = torch.full((B, T_max), special.pad_id, dtype=torch.long, device=src.device)  # (B, T)
    cache = model.init_cache(model.encode(src), capacity=T_max)
    active = torch.arange(B, device=src.device)  # (B',) rows in the batch being decoded
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B',) past their eos
    step = torch.full((B, 1), special.bos_id, dtype=torch.long, device=src.device)  # (B', 1)
    total = torch.zeros(B, dtype=torch.float32, device=src.device) if scored else None  # (B,)
    for t in range(1, T_max + 1):
        check_deadline(cfg.deadline, t)
        decoded = model.decode(step, cache=cache)
        assert decoded.logits is not None and decoded.cache is not None  # a projected cached step
        at_limit = limit[active] <= t if t >= shortest else None  # (B',)
        logits = apply_rules(decoded.logits[:, -1], t, at_limit, cfg.min_len, special.eos_id)
        if cfg.no_repeat_ngram:
            logits = block_repeats(logits, out[active, : t - 1], cfg.no_repeat_ngram)
        if cfg.stutter_guard:
            logits = block_stutter(logits, out[active, : t - 1], cfg.stutter_guard)
        token = pick(logits, active).masked_fill(finished, special.eos_id)  # (B',)
        if total is not None:
            total.index_add_(0, active, chosen_log_probs(decoded, token).masked_fill(finished, 0))
        out[active, t - 1] = token  # a finished row's output ends at its first eos (strip)
        finished = finished | (token == special.eos_id)
        n_finished = int(finished.sum())  # the one host sync of a step
        if n_finished == len(finished):
            break
        cache = decoded.cache
        if 2 * n_finished >= len(finished):  # drop finished rows once they are half the batch:
            keep = (~finished).nonzero().squeeze(1)  # (B'',)  fewer, larger steps of the cache
            cache, active, token = cache.reorder(keep), active[keep], token[keep]
            finished = finished[keep]
        step = token[:, None]  # (B', 1)
    tokens = [strip(row, special.eos_id, special.pad_id) for row in out.tolist()]
    return Walked(tokens, None if total is None else total.tolist())


def chosen_log_probs(decoded: Decoded[Any], token: Tensor) -> Tensor:
    """(B',) float32 log-probabilities of `token` (B',) in the step's (B', 1, V) scores, at
    least FORCED_EOS_SCORE (an eos the limit forced)."""
    assert decoded.logits is not None
    scores = decoded.logits[:, -1].float()  # (B', V)
    picked = scores.gather(1, token[:, None]).squeeze(1)  # (B',)
    if not decoded.normalized:
        picked = picked - scores.logsumexp(dim=-1)
    return picked.clamp(min=FORCED_EOS_SCORE)


def strip(ids: list[int], eos_id: int, pad_id: int) -> list[int]:
    """Ids up to the first eos (or padding)."""
    for i, token in enumerate(ids):
        if token in (eos_id, pad_id):
            return ids[:i]
    return ids
