"""Token-budget batches: length-bucketed, reshuffled per epoch, sharded by rank, resumable.

Every epoch's batches are a pure function of (seed, epoch), so a sampler restored from its
small state (epoch, position, seed) continues with exactly the batch that would have come next.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from aiayn.data.sources import DataError


def round_up(lengths, multiple: int):
    """Lengths rounded up to a multiple (an int or an array of them)."""
    return -(-lengths // multiple) * multiple


@dataclass(frozen=True)
class SamplerState:
    epoch: int  # epochs completed
    position: int  # batches of this rank already yielded in the current epoch
    seed: int
    temperature: float | None = None  # direction sampling (directions.py); else None
    case_augment: float | None = None  # the fraction of pairs cased (case_augment.py); else None
    case_sides: str | None = None  # "source" where only sources are cased; else None (both)
    case_mode: str | None = None  # "add" where cased copies join their pairs; else None
    subword_sampling: float | None = None  # alpha (subword_sampling.py); else None
    subword_sides: str | None = None  # "both" where targets are sampled too; else None (source)


# SamplerState's fields that say how an epoch's pairs change, and the --set name of each
PAIR_SETTINGS = {
    "case_augment": "case_augment",
    "case_sides": "case_augment_sides",
    "case_mode": "case_augment_mode",
    "subword_sampling": "subword_sampling",
    "subword_sides": "subword_sampling_sides",
}
SWITCHES = ("case_augment", "subword_sampling")  # the settings that turn each one on


class EpochLengths(Protocol):
    """Pairs whose lengths change from epoch to epoch (case_augment.CaseAugment,
    subword_sampling.SubwordSampling)."""

    def lengths(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """(N,) source and target pieces of every pair in this epoch."""
        ...

    def state_settings(self) -> dict[str, Any]:
        """What the sampler's state records of it (SamplerState fields, defaults left out): a
        run resumed with other settings would have other batches."""
        ...


class TokenBatchSampler:
    """Yields arrays of sentence indices whose padded size stays within a token budget.

    A batch of n sentences costs n x (longest source + 1) source tokens and n x (longest
    target + 1) target tokens, padding included (+1 for eos or bos); both must fit `max_tokens`.
    With `pad_to` > 1 every length is first rounded up to a multiple of it, as `collate` pads
    them: a few distinct batch shapes instead of hundreds, so kernels and their buffers made for
    one shape are reused rather than made anew (and kept) for the next.
    """

    def __init__(
        self,
        src_lengths: np.ndarray,
        tgt_lengths: np.ndarray,
        max_tokens: int,
        seed: int = 0,
        shuffle: bool = True,
        rank: int = 0,
        world_size: int = 1,
        multiple_of: int | None = None,
        pad_to: int = 1,
        epoch_lengths: EpochLengths | None = None,
    ) -> None:
        """epoch_lengths: where pairs change each epoch (case augmentation), their lengths;
        the sampler then batches each epoch by that epoch's lengths."""
        if pad_to < 1:
            raise ValueError(f"pad_to must be at least 1, got {pad_to}")
        self.src_cost = round_up(np.asarray(src_lengths, np.int64) + 1, pad_to)  # (N,)
        self.tgt_cost = round_up(np.asarray(tgt_lengths, np.int64) + 1, pad_to)  # (N,)
        self.pad_to = pad_to
        self.epoch_lengths = epoch_lengths
        self.max_tokens = max_tokens
        self.seed = seed
        self.shuffle = shuffle
        self.rank = rank
        self.world_size = world_size
        # Batches per epoch are made a multiple of this (world size x accumulation), so that
        # one process accumulating N batches sees exactly what N processes see in one step.
        self.multiple_of = multiple_of or world_size
        if self.multiple_of % world_size:
            raise ValueError(f"multiple_of={multiple_of} must be a multiple of {world_size}")
        self.epoch = 0
        self.position = 0
        self.temperature: float | None = None  # direction sampling (a multilingual subclass)
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside world size {world_size}")
        too_long = np.flatnonzero(np.maximum(self.src_cost, self.tgt_cost) > max_tokens)
        if len(too_long):
            longest = int(np.maximum(self.src_cost, self.tgt_cost).max())
            raise DataError(
                f"{len(too_long)} sentence(s) (e.g. number {too_long[0]}) are longer than the "
                f"token budget {max_tokens} on their own (longest: {longest} tokens); raise "
                "--max-tokens or prepare with a lower --max-words"
            )
        if len(self.src_cost) < world_size:
            raise DataError(
                f"{len(self.src_cost)} sentences cannot be shared by {world_size} ranks"
            )
        self._cached: tuple[int, list[np.ndarray]] | None = None
        self.epoch_batches(0)  # fail now, not mid-training, if ranks cannot share the batches

    def epoch_batches(self, epoch: int) -> list[np.ndarray]:
        """All ranks' batches of an epoch, in the order they are consumed (cached per epoch)."""
        if self._cached is None or self._cached[0] != epoch:
            self._cached = (epoch, self._make_batches(epoch))
        return self._cached[1]

    def _make_batches(self, epoch: int) -> list[np.ndarray]:
        rng = np.random.default_rng([self.seed, epoch])
        src_cost, tgt_cost = self._costs(epoch)
        batches = self._fill(self._epoch_order(rng, src_cost, tgt_cost), src_cost, tgt_cost)
        batches = self._split_until_divisible(batches)
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        return batches

    def _costs(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """(N,) source and target tokens per sentence in an epoch, padding to pad_to included."""
        if self.epoch_lengths is None:
            return self.src_cost, self.tgt_cost
        src_lengths, tgt_lengths = self.epoch_lengths.lengths(epoch)
        return round_up(src_lengths + 1, self.pad_to), round_up(tgt_lengths + 1, self.pad_to)

    def _epoch_order(
        self, rng: np.random.Generator, src_cost: np.ndarray, tgt_cost: np.ndarray
    ) -> np.ndarray:
        """The epoch's sentences, each once, by source then target length (ties at random)."""
        n = len(src_cost)
        tie_break = rng.permutation(n) if self.shuffle else np.arange(n)
        return np.lexsort((tie_break, tgt_cost, src_cost))  # src, then tgt length

    def _fill(
        self, order: np.ndarray, src_cost: np.ndarray, tgt_cost: np.ndarray
    ) -> list[np.ndarray]:
        """Greedy: add length-sorted sentences while n x longest stays within the budget."""
        src, tgt = src_cost[order].tolist(), tgt_cost[order].tolist()
        bounds, start, longest = [], 0, 0
        for i, (s, t) in enumerate(zip(src, tgt, strict=True)):
            candidate = max(longest, s, t)
            if (i - start + 1) * candidate > self.max_tokens:
                bounds.append(i)
                start, candidate = i, max(s, t)
            longest = candidate
        return np.split(order, bounds)

    def _split_until_divisible(self, batches: list[np.ndarray]) -> list[np.ndarray]:
        """Halve the largest batches until every rank gets the same number (none is dropped)."""
        while len(batches) % self.multiple_of:
            largest = max(range(len(batches)), key=lambda i: len(batches[i]))
            if len(batches[largest]) < 2:
                raise DataError(f"cannot share {len(batches)} batches across {self.multiple_of}")
            half = len(batches[largest]) // 2
            batch = batches.pop(largest)
            batches[largest:largest] = [batch[:half], batch[half:]]
        return batches

    def __len__(self) -> int:
        """Batches of this rank in the current epoch."""
        return len(self.epoch_batches(self.epoch)) // self.world_size

    def __iter__(self) -> Iterator[np.ndarray]:
        """This rank's remaining batches of the current epoch; then the epoch counts as done."""
        mine = self.epoch_batches(self.epoch)[self.rank :: self.world_size]
        while self.position < len(mine):
            self.position += 1
            yield mine[self.position - 1]
        self.epoch, self.position = self.epoch + 1, 0

    def state(self) -> SamplerState:
        changing = self.epoch_lengths
        settings = changing.state_settings() if changing is not None else {}
        return SamplerState(self.epoch, self.position, self.seed, self.temperature, **settings)

    def state_dict(self) -> dict:
        """The state as state.json holds it (no temperature key for bilingual data, no
        case_augment or subword_sampling key without them)."""
        return {k: v for k, v in asdict(self.state()).items() if v is not None}

    def load_state_dict(self, state: dict) -> None:
        restored = SamplerState(**state)
        if restored.seed != self.seed:
            raise ValueError(f"sampler state has seed {restored.seed}, this sampler {self.seed}")
        if restored.temperature != self.temperature:  # other direction shares, other batches
            was, now = (
                "bilingual data" if t is None else f"--set sampling_temperature={t}"
                for t in (restored.temperature, self.temperature)
            )
            raise ValueError(f"the data position is one of {was}, not {now}; resume with {was}")
        saved, mine = _pair_settings(restored), _pair_settings(self.state())
        if saved != mine:  # other pairs cased or sampled, other sides, a mode: other batches
            switched = [k for k in SWITCHES if k in saved or k in mine]
            was, now = (
                "--set "
                + " ".join(f"{k}={v}" for k, v in {**dict.fromkeys(switched, 0), **s}.items())
                for s in (saved, mine)
            )
            raise ValueError(f"the data position is one of {was}, not {now}; resume with {was}")
        n = len(self.epoch_batches(restored.epoch)) // self.world_size
        if not 0 <= restored.position <= n:
            raise ValueError(
                f"sampler state position {restored.position} is outside epoch "
                f"{restored.epoch}'s {n} batches: was it saved for other data or settings?"
            )
        self.epoch, self.position = restored.epoch, restored.position


def _pair_settings(state: SamplerState) -> dict[str, object]:
    """What a state says of how an epoch's pairs change, by the settings' --set names."""
    found = {name: getattr(state, field) for field, name in PAIR_SETTINGS.items()}
    return {name: value for name, value in found.items() if value is not None}
