"""Sampling on the key/value cache: temperature, top-k and top-p (nucleus), from a seed."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from aiayn.decode.greedy import token_by_token
from aiayn.model import Transformer


@dataclass(frozen=True)
class SamplingOptions:
    temperature: float = 1.0  # divides the logits; lower is more conservative
    top_k: int = 0  # sample among the k most probable tokens; 0 = all
    top_p: float = 1.0  # among the fewest tokens holding this much probability; 1 = all
    seed: int = 0  # the same seed, the same samples
    max_len_a: float = 1.0
    max_len_b: int = 50

    def __post_init__(self) -> None:
        if self.temperature <= 0 or self.top_k < 0 or not 0 < self.top_p <= 1:
            raise ValueError(
                "sampling needs temperature > 0, top_k >= 0 and 0 < top_p <= 1 "
                f"(got {self.temperature}, {self.top_k}, {self.top_p})"
            )


def filter_logits(logits: Tensor, top_k: int, top_p: float) -> Tensor:
    """Logits with everything outside the top-k and the top-p nucleus set to -inf: (B, V)."""
    if top_k:
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, -math.inf)
    if top_p < 1.0:
        sorted_logits, order = logits.sort(dim=-1, descending=True)  # (B, V)
        cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        outside = cumulative - sorted_logits.softmax(dim=-1) >= top_p  # mass before it is enough
        logits = logits.scatter(-1, order, sorted_logits.masked_fill(outside, -math.inf))
    return logits


@torch.no_grad()
def sample_decode(model: Transformer, src: Tensor, opts: SamplingOptions) -> list[list[int]]:
    """One sampled output per sentence (without bos and eos), reproducible from opts.seed."""
    generator = torch.Generator(device=src.device).manual_seed(opts.seed)

    def pick(logits: Tensor) -> Tensor:
        filtered = filter_logits(logits.float() / opts.temperature, opts.top_k, opts.top_p)
        return torch.multinomial(filtered.softmax(dim=-1), 1, generator=generator).squeeze(1)

    return token_by_token(model, src, pick, opts.max_len_a, opts.max_len_b)
