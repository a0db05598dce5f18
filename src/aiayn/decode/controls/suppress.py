"""Suppressed piece sequences (CTranslate2's `suppress_sequences`): an output never contains one.

A sequence of n pieces is blocked at its last piece: wherever a row's last n - 1 output pieces
are its first n - 1, its n-th gets -inf (a single piece: always). Vectorized over rows and
sequences as `rules.block_repeats` is: one comparison of every row's tail with every sequence's
right-aligned head per step, no loop over tokens.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

ANY = -2  # in a right-aligned head: a position the sequence does not reach


class Suppression:
    """The sequences each sentence of a batch must not produce.

    Args:
        sequences: per sentence, its sequences of piece ids (none: an empty tuple).
    """

    def __init__(self, sequences: list[tuple[tuple[int, ...], ...]], device: Any) -> None:
        B = len(sequences)
        Q = max([1, *map(len, sequences)])
        H = max([1, *(len(s) - 1 for seqs in sequences for s in seqs)])  # longest head
        heads = torch.full((B, Q, H), ANY, dtype=torch.long)  # (B, Q, H) right-aligned heads
        last = torch.zeros((B, Q), dtype=torch.long)  # (B, Q) the piece each one blocks
        used = torch.zeros((B, Q), dtype=torch.bool)
        for b, seqs in enumerate(sequences):
            for q, seq in enumerate(seqs):
                if len(seq) > 1:
                    heads[b, q, H - (len(seq) - 1) :] = torch.tensor(seq[:-1])
                last[b, q], used[b, q] = seq[-1], True
        self.heads, self.last, self.used = heads.to(device), last.to(device), used.to(device)

    def block(self, scores: Tensor, outputs: Tensor, sentences: Tensor) -> Tensor:
        """Scores (R, V) with every piece that would complete a suppressed sequence at -inf.

        Args:
            outputs: (R, t) each row's output pieces so far, without bos.
            sentences: (R,) the sentence of each row.
        """
        H = self.heads.shape[2]
        tail = outputs[:, -H:] if outputs.shape[1] else outputs.new_empty(outputs.shape[0], 0)
        if tail.shape[1] < H:  # fewer pieces than the longest head: pad in front
            pad = tail.new_full((tail.shape[0], H - tail.shape[1]), -1)
            tail = torch.cat((pad, tail), dim=1)  # (R, H)
        heads = self.heads[sentences]  # (R, Q, H)
        match = ((heads == tail[:, None, :]) | (heads == ANY)).all(dim=-1)  # (R, Q)
        match &= self.used[sentences]
        banned = torch.where(match, -math.inf, math.inf).to(scores.dtype)  # (R, Q)
        return scores.scatter_reduce(1, self.last[sentences], banned, reduce="amin")
