"""Target prefixes: every output of a sentence starts with its given pieces.

The part of the prefix that every sentence of a batch shares in length goes through the decoder
in one teacher-forced pass that fills the key/value cache (`prefill`); the search continues from
there. Pieces past that (the longer prefixes of a batch, or every piece on a cache that takes one
step at a time: compiled steps, ONNX graphs) are forced step by step: their row of the next
token's scores becomes 0 for the prefix piece and -inf elsewhere (`force`).

A prefix's pieces are given, not chosen, so they add 0 to a hypothesis' log P either way: the
score ranks the continuations of the prefix, under the length penalty of the whole output.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from aiayn.model import Transformer


def padded(seqs: list[tuple[int, ...]], device: Any, fill: int = -1) -> Tensor:
    """Sequences of ids -> (B, L) right-padded with `fill` (L >= 1)."""
    table = torch.full((len(seqs), max([1, *map(len, seqs)])), fill, dtype=torch.long)
    for row, seq in enumerate(seqs):
        table[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return table.to(device)


class Prefix:
    """The target prefixes of a batch's sentences (empty = none)."""

    def __init__(self, prefixes: list[tuple[int, ...]], device: Any) -> None:
        self.lengths = [len(p) for p in prefixes]
        self.ids = padded(prefixes, device)  # (B, L), -1 past each prefix

    def shared(self, model: Any) -> int:
        """How many pieces `prefill` decodes in one pass: those every sentence has, where the
        model decodes many steps at once on its cache (our `Transformer`)."""
        return min(self.lengths) if isinstance(model, Transformer) else 0

    def prefill(self, model: Transformer, cache: Any, bos_id: int, n: int) -> tuple[Tensor, Any]:
        """The first n prefix pieces of every sentence through the decoder in one pass.

        Feeds bos and the first n - 1 pieces (the loop's next step feeds the n-th), so the
        cache then holds n steps. Returns (B, 1 + n) the outputs so far (bos first), the cache.
        """
        B = self.ids.shape[0]
        bos = torch.full((B, 1), bos_id, dtype=torch.long, device=self.ids.device)
        tokens = torch.cat((bos, self.ids[:, :n]), dim=1)  # (B, 1 + n)
        decoded = model.decode_states(tokens[:, :n], cache=cache)  # no logits needed
        return tokens, decoded.cache

    def force(self, scores: Tensor, t: int, sentences: Tensor) -> Tensor:
        """Scores (R, V) with each row whose prefix has a t-th piece allowed only that piece.

        sentences: (R,) the sentence of each row."""
        if t > self.ids.shape[1]:
            return scores
        piece = self.ids[sentences, t - 1]  # (R,), -1 where the prefix has ended
        vocab = torch.arange(scores.shape[1], device=scores.device)
        only = torch.where(vocab[None, :] == piece[:, None], 0.0, -math.inf).to(scores.dtype)
        return torch.where((piece >= 0)[:, None], only, scores)
