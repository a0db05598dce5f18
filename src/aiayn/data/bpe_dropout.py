"""BPE-dropout (Provilkov et al. 2020): a word's pieces merged as BPE merges them, each possible
merge left out with probability alpha at every step, so the word comes out in one of its
finer segmentations.

SentencePiece samples this itself (`encode(enable_sampling=True)`), but its draws cannot be
reproduced: the same seed gives other pieces in another process (sentencepiece 0.2, tried), and
a resumed run is another process. Here the draws come from a numpy generator the caller seeds,
and the merges from the vocabulary's own pieces and scores: at alpha 0 the result is
SentencePiece's own segmentation (a test holds every training line to it).
"""

from __future__ import annotations

import math

import numpy as np


def dropout_merges(
    units: list[str], scores: dict[str, float], alpha: float, rng: np.random.Generator
) -> list[str]:
    """BPE over a word's units (its characters): the adjacent pair whose concatenation is the
    best-scored piece merges first (the leftmost of equals, as SentencePiece does), each pair
    left out of a step with probability alpha; it ends when no pair is left to merge.

    Args:
        units: (L,) the word's characters (or pieces), in order.
        scores: the vocabulary's mergeable pieces and their scores (higher merges first).
    """
    units = list(units)
    # every step's draws at once (L - 1 pairs at most, one fewer each step): one call, not L
    draws, used = rng.random(len(units) * (len(units) - 1) // 2).tolist(), 0
    while len(units) > 1:
        pairs = len(units) - 1
        kept = [r >= alpha for r in draws[used : used + pairs]]  # this step's pairs not dropped
        used += pairs
        best, at = -math.inf, -1
        for k, keep in enumerate(kept):
            if keep:
                score = scores.get(units[k] + units[k + 1])
                if score is not None and score > best:
                    best, at = score, k
        if at < 0:
            break
        units[at : at + 2] = [units[at] + units[at + 1]]
    return units


def words(units: list[str], boundary: str) -> list[list[str]]:
    """The units cut before each one that starts with `boundary` (SentencePiece's "▁"): no
    piece holds a boundary inside, so no merge crosses one."""
    found: list[list[str]] = []
    for unit in units:
        if unit.startswith(boundary) or not found:
            found.append([unit])
        else:
            found[-1].append(unit)
    return found
