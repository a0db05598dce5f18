"""Training on many directions at once: each pair's direction, and batches whose directions
are drawn with temperature sampling (XLM, Conneau & Lample 2019; M2M-100, Fan et al. 2021).

Every epoch draws its pairs anew: direction d, with n_d training pairs, gets a share
p_d ~ n_d^(1/T) of the epoch's N pairs (N = all pairs, as fairseq's sampled multilingual
datasets keep it). A direction with fewer than p_d N pairs is repeated, one with more is
subsampled (other pairs each epoch). The drawn pairs are then sorted by length and cut into
token-budget batches exactly as bilingual ones are, so a batch mixes directions of similar
lengths. The draw is a pure function of (seed, epoch), so resuming stays exact.
"""

from __future__ import annotations

import numpy as np

from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.data_dir import DataDir
from aiayn.data.sources import DataError


def load_directions(data: DataDir, split: str, n_pairs: int) -> np.ndarray | None:
    """Each pair's direction (an index into meta.json's `directions`), or None for bilingual
    data. Errors name the file, the value and what to do."""
    names, path = data.meta.directions, data.directions(split)
    fix = f"re-run `aiayn prepare --langs ... --out {data.root}`"
    if not names:
        if path.is_file():
            raise DataError(f"{path}: present, but {data.meta_file} lists no directions; {fix}")
        return None
    if not path.is_file():
        raise DataError(f"{path}: missing; {data.meta_file} lists directions {names}; {fix}")
    try:
        values = np.load(path, allow_pickle=False)  # never unpickle a data file
    except (ValueError, OSError, EOFError) as err:
        raise DataError(f"{path}: not a NumPy array ({err}); {fix}") from None
    if values.ndim != 1 or values.dtype.kind not in "iu" or len(values) != n_pairs:
        raise DataError(
            f"{path}: holds {values.dtype}{list(values.shape)}, not one integer per pair of "
            f"{split} ({n_pairs}); {fix}"
        )
    bad = np.flatnonzero((values < 0) | (values >= len(names)))
    if len(bad):
        raise DataError(
            f"{path}: pair {bad[0]} has direction {values[bad[0]]}, but {data.meta_file} lists "
            f"{len(names)} ({', '.join(names)}); {fix}"
        )
    return values.astype(np.int64)


def temperature_shares(n_pairs: np.ndarray, temperature: float) -> np.ndarray:
    """p_d ~ n_d^(1/T): T = 1 keeps the data's proportions, a larger T moves toward uniform.

    Args:
        n_pairs: (D,) training pairs per direction (a direction with none gets no share).

    Returns:
        (D,) shares that sum to 1.
    """
    weights = np.asarray(n_pairs, np.float64) ** (1.0 / temperature)
    weights[np.asarray(n_pairs) == 0] = 0.0
    return weights / weights.sum()


def epoch_counts(shares: np.ndarray, size: int) -> np.ndarray:
    """(D,) pairs per direction in an epoch of `size`: size x share, rounded (largest
    remainders first) so that they add up to `size`."""
    exact = shares * size
    counts = np.floor(exact).astype(np.int64)
    short = size - int(counts.sum())
    counts[np.argsort(counts - exact, kind="stable")[:short]] += 1
    return counts


def draw_epoch(directions: np.ndarray, wanted: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Pair indices holding wanted[d] pairs of each direction d: whole passes over its pairs,
    then the rest drawn without replacement. Vectorized: no loop over pairs or directions.

    Args:
        directions: (N,) each pair's direction.
        wanted: (D,) pairs wanted per direction.

    Returns:
        (sum(wanted),) pair indices, unordered.
    """
    n = len(directions)
    have = np.bincount(directions, minlength=len(wanted))  # (D,)
    passes = np.where(have > 0, wanted // np.maximum(have, 1), 0)  # (D,)
    rest = np.where(have > 0, wanted - passes * have, 0)  # (D,) fewer than have[d]
    repeated = np.repeat(np.arange(n), passes[directions])  # whole passes
    by_direction = np.lexsort((rng.random(n), directions))  # random order within a direction
    grouped = directions[by_direction]  # (N,) sorted
    rank = np.arange(n) - np.searchsorted(grouped, grouped)  # place within its direction
    return np.concatenate([repeated, by_direction[rank < rest[grouped]]])


class TemperatureBatchSampler(TokenBatchSampler):
    """Token-budget batches of a multilingual split, directions drawn with temperature T.

    Sharding, accumulation, the budget and the saved state are TokenBatchSampler's; only the
    epoch's pairs differ (a pair may come twice in an epoch, or not at all).
    """

    def __init__(
        self,
        src_lengths: np.ndarray,
        tgt_lengths: np.ndarray,
        directions: np.ndarray,
        n_directions: int,
        max_tokens: int,
        temperature: float = 5.0,
        **options,
    ) -> None:
        """directions: (N,) each pair's direction in [0, n_directions); options: those of
        TokenBatchSampler (seed, rank, world_size, multiple_of, pad_to, epoch_lengths)."""
        self.directions = np.asarray(directions, np.int64)
        counts = np.bincount(self.directions, minlength=n_directions)  # (D,) pairs
        self.shares = temperature_shares(counts, temperature)  # (D,)
        self.wanted = epoch_counts(self.shares, len(self.directions))  # (D,)
        super().__init__(src_lengths, tgt_lengths, max_tokens, **options)
        self.temperature = float(temperature)

    def _epoch_order(
        self, rng: np.random.Generator, src_cost: np.ndarray, tgt_cost: np.ndarray
    ) -> np.ndarray:
        chosen = draw_epoch(self.directions, self.wanted, rng)  # (M,)
        tie_break = rng.permutation(len(chosen))
        return chosen[np.lexsort((tie_break, tgt_cost[chosen], src_cost[chosen]))]


def batch_sampler(
    src_lengths: np.ndarray,
    tgt_lengths: np.ndarray,
    directions: np.ndarray | None,
    n_directions: int,
    max_tokens: int,
    temperature: float,
    **options,
) -> TokenBatchSampler:
    """The training sampler of a split: temperature-sampled directions where the data has
    them (`load_directions`), else bilingual batches exactly as before."""
    if directions is None:
        return TokenBatchSampler(src_lengths, tgt_lengths, max_tokens, **options)
    return TemperatureBatchSampler(
        src_lengths, tgt_lengths, directions, n_directions, max_tokens, temperature, **options
    )
