"""Greedy decoding on the key/value cache: the most probable token at each step; and greedy
outputs scored the way beam search scores its hypotheses."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.decode.beam import Hypothesis, length_penalty
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.rules import FORCED_EOS_SCORE
from aiayn.decode.token_by_token import token_by_token


@torch.inference_mode()
def greedy_decode(
    model: DecodingModel[Any], src: Tensor, cfg: DecodeConfig = DecodeConfig()
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


@torch.inference_mode()
def greedy_hypotheses(
    model: DecodingModel[Any], src: Tensor, cfg: DecodeConfig = DecodeConfig()
) -> list[list[Hypothesis]]:
    """Greedy decoding's output of each sentence as a one-hypothesis n-best list, scored as
    beam search scores: log P(Y|X), eos included, over lp(|Y| + 1). What a beam of 1 means
    to `aiayn translate` and to the engines, with the score the server and `--nbest` report.

    The log-probabilities come from one teacher-forced pass over the found outputs (decoding
    itself computes no softmax); an eos forced at the length limit scores at least
    FORCED_EOS_SCORE, as in beam search.
    """
    special = model.cfg  # the model's pad, bos and eos ids
    outputs = greedy_decode(model, src, cfg)
    T = max(len(y) for y in outputs) + 1  # eos included
    tgt_in = torch.full((len(outputs), T), special.pad_id, dtype=torch.long)  # (B, T)
    tgt_out = torch.full_like(tgt_in, special.pad_id)  # (B, T)
    for i, y in enumerate(outputs):
        tgt_in[i, : len(y) + 1] = torch.tensor([special.bos_id, *y], dtype=torch.long)
        tgt_out[i, : len(y) + 1] = torch.tensor([*y, special.eos_id], dtype=torch.long)
    tgt_in, tgt_out = tgt_in.to(src.device), tgt_out.to(src.device)
    log_probs = torch.log_softmax(model(src, tgt_in).float(), dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, tgt_out[..., None]).squeeze(-1)  # (B, T)
    picked = picked.clamp(min=FORCED_EOS_SCORE).masked_fill(tgt_out == special.pad_id, 0.0)
    return [
        [Hypothesis(y, lp / length_penalty(len(y) + 1, cfg.alpha, cfg.length_penalty), lp)]
        for y, lp in zip(outputs, picked.sum(dim=1).tolist(), strict=True)
    ]
