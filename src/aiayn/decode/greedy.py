"""Greedy decoding on the key/value cache: the most probable token at each step; and greedy
outputs scored the way beam search scores its hypotheses."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.decode.beam import Hypothesis, length_penalty
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.shortlisted import ShortlistModel
from aiayn.decode.token_by_token import Walked, token_by_token


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
    return walked(model, src, cfg).tokens


def walked(
    model: DecodingModel[Any], src: Tensor, cfg: DecodeConfig, scored: bool = False
) -> Walked:
    """`token_by_token` with `most_probable`; a compiled model (or its shortlist) runs the
    whole search as one compiled loop instead (`decode.greedy_loop`)."""
    if isinstance(model, CompiledModel | ShortlistModel):
        found = model.greedy(src, cfg, scored)
        if found is not None:
            return found
    return token_by_token(model, src, most_probable, cfg, scored)


def most_probable(logits: Tensor, rows: Tensor) -> Tensor:
    """(B', V) scores -> (B',) the best token of each row: greedy's `Pick`."""
    return logits.argmax(dim=-1)


@torch.inference_mode()
def greedy_hypotheses(
    model: DecodingModel[Any], src: Tensor, cfg: DecodeConfig = DecodeConfig()
) -> list[list[Hypothesis]]:
    """Greedy decoding's output of each sentence as a one-hypothesis n-best list, scored as
    beam search scores: log P(Y|X), eos included, over lp(|Y| + 1). What a beam of 1 means
    to `aiayn translate` and to the engines, with the score the server and `--nbest` report.

    The log-probabilities are summed as the search goes (`token_by_token`'s `scored`): the
    step's own scores, as beam search reads them.
    """
    found = walked(model, src, cfg, scored=True)
    assert found.log_probs is not None
    return [
        [Hypothesis(y, lp / length_penalty(len(y) + 1, cfg.alpha, cfg.length_penalty), lp)]
        for y, lp in zip(found.tokens, found.log_probs, strict=True)
    ]
