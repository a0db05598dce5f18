"""Sampling on the key/value cache: temperature, top-k and top-p (nucleus), from a seed.

Each sentence draws from its own random stream, derived from (seed, its line number), so a
sampled line is the same whatever else is in its batch or how the input is batched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.token_by_token import token_by_token


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


def derived_seed(seed: int, index: int) -> int:
    """A seed for part `index` of the work seeded by `seed` (a line, a corpus chunk): numpy's
    SeedSequence spreads neighbouring pairs far apart."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, dtype=np.uint64)[0])


def line_generator(seed: int, line: int, device: torch.device) -> torch.Generator:
    """The random stream of one input line: seeded from (seed, line)."""
    return torch.Generator(device=device).manual_seed(derived_seed(seed, line))


@torch.inference_mode()
def sample_decode(
    model: DecodingModel[Any], src: Tensor, cfg: DecodeConfig, lines: Sequence[int] | None = None
) -> list[list[int]]:
    """One sampled output per sentence (without bos and eos), reproducible from cfg.seed.

    Args:
        src: (B, S) source ids ending with eos, right-padded.
        lines: the input line number of each row (default 0..B-1); each row samples from the
            stream of (cfg.seed, its line), so its output does not depend on its batch mates.
    """
    lines = range(src.shape[0]) if lines is None else lines
    if len(lines) != src.shape[0]:
        raise ValueError(f"{len(lines)} line numbers for {src.shape[0]} sentences")
    streams = [line_generator(cfg.seed, line, src.device) for line in lines]

    def pick(logits: Tensor, rows: Tensor) -> Tensor:
        # a finished row past its limit may have every token banned (eos repeated is an n-gram
        # seen): its draw is ignored, but must not be a distribution of NaNs
        none_left = torch.isneginf(logits).all(dim=-1, keepdim=True)  # (B', 1)
        logits = logits.masked_fill(none_left, 0.0)
        probs = filter_logits(logits.float() / cfg.temperature, cfg.top_k, cfg.top_p).softmax(-1)
        draws = [
            torch.multinomial(p, 1, generator=streams[row])  # (1,) from the row's own stream
            for p, row in zip(probs, rows.tolist(), strict=True)
        ]
        return torch.cat(draws)  # (B',)

    return token_by_token(model, src, pick, cfg).tokens


@dataclass(frozen=True)
class Sampler:
    """Sampling as a `Decoder`: `decode_lines` gives it each row's line number."""

    cfg: DecodeConfig

    def __call__(
        self, model: DecodingModel[Any], src: Tensor, lines: Sequence[int] | None = None
    ) -> list[list[int]]:
        return sample_decode(model, src, self.cfg, lines)
