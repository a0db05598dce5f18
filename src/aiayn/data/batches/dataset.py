"""A prepared data directory: its metadata, and memory-mapped token ids turned into batches."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from aiayn.data.batches.alignments import dense_targets
from aiayn.data.batches.directions import load_directions
from aiayn.data.batches.sampler import round_up
from aiayn.data.data_dir import DataDir
from aiayn.data.sources import DataError
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from aiayn.layout import SPLITS

CasedIds = tuple[np.ndarray, np.ndarray | None]  # a pair's other ids (None: its own target)
IdPair = tuple[np.ndarray, np.ndarray]  # (source ids, target ids)
FlatIds = tuple[np.ndarray, np.ndarray]  # (every line's ids one after another, (N + 1,) offsets)


@dataclass(frozen=True)
class Batch:
    """Padded tensors for one batch; target input starts with bos, target output ends with eos."""

    src: Tensor  # (B, S) source ids + eos
    tgt_in: Tensor  # (B, T) bos + target ids
    tgt_out: Tensor  # (B, T) target ids + eos
    alignment: Tensor | None = None  # (B, T, S) reference alignment rows (guided alignment)

    @property
    def n_tgt_tokens(self) -> int:
        return int((self.tgt_out != PAD_ID).sum())


class ParallelData:
    """One split of a prepared directory, memory-mapped: nothing is read until it is used."""

    def __init__(self, data: DataDir | str | Path, split: str) -> None:
        """data: an opened data directory (or its path, opened here)."""
        data = DataDir.open(data)
        if split not in SPLITS and split not in data.meta.sizes:
            raise DataError(f"unknown split {split!r}; choose one of {list(data.meta.sizes)}")
        vocab_size = data.meta.vocab_size
        self.src_ids, self.src_offsets = load_ids(data.ids(split, "src"), vocab_size)
        self.tgt_ids, self.tgt_offsets = load_ids(data.ids(split, "tgt"), vocab_size)
        if len(self.src_offsets) != len(self.tgt_offsets):
            raise DataError(f"{data.root}: {split} source and target counts differ; re-prepare")
        self.links: tuple[np.ndarray, np.ndarray] | None = None  # `with_alignments`
        # (N,) each pair's direction in a multilingual directory (meta.directions); else None
        self.directions = load_directions(data, split, len(self))

    @classmethod
    def encoded(cls, src: list[list[int]], tgt: list[list[int]]) -> ParallelData:
        """Pairs already encoded, held in memory (a few hundred validation sentences), that
        batch and collate as a split does."""
        pairs = cls.__new__(cls)
        pairs.src_ids, pairs.src_offsets = _flat(src)
        pairs.tgt_ids, pairs.tgt_offsets = _flat(tgt)
        pairs.links, pairs.directions = None, None
        return pairs

    def resegmented(self, src: FlatIds | None, tgt: FlatIds | None) -> ParallelData:
        """The same pairs with other pieces on a side (None: the side's own), batched and
        collated as the split is: one epoch of subword sampling (subword_sampling.py)."""
        pairs = copy.copy(self)
        for side, ids in (("src", src), ("tgt", tgt)):
            if ids is not None:
                if len(ids[1]) != len(self.src_offsets):
                    raise ValueError(f"{len(ids[1]) - 1} {side} lines for {len(self)} pairs")
                setattr(pairs, f"{side}_ids", ids[0])
                setattr(pairs, f"{side}_offsets", ids[1])
        return pairs

    def with_alignments(self, links: np.ndarray, offsets: np.ndarray) -> None:
        """Batches then carry each pair's reference alignment ((M, 2) (target, source) piece
        links, sentence i's at offsets[i]:offsets[i + 1]) as a dense target."""
        self.links = (links, offsets)

    def __len__(self) -> int:
        return len(self.src_offsets) - 1

    @property
    def src_lengths(self) -> np.ndarray:
        return np.diff(self.src_offsets)  # (N,) pieces, without eos

    @property
    def tgt_lengths(self) -> np.ndarray:
        return np.diff(self.tgt_offsets)  # (N,) pieces, without bos/eos

    def pair(self, i: int) -> IdPair:
        src = self.src_ids[self.src_offsets[i] : self.src_offsets[i + 1]]
        tgt = self.tgt_ids[self.tgt_offsets[i] : self.tgt_offsets[i + 1]]
        return np.asarray(src, np.int64), np.asarray(tgt, np.int64)

    def collate(
        self,
        indices: np.ndarray,
        pad_to: int = 1,
        replaced: Mapping[int, CasedIds] | None = None,
    ) -> Batch:
        """Pad the given sentences into one batch (padding after the tokens), the lengths
        rounded up to a multiple of `pad_to`; `replaced` gives some pairs other ids this
        epoch (case augmentation; a target of None keeps the pair's own)."""
        pairs = [self.pair(int(i)) for i in indices]
        if replaced:
            pairs = [_cased(p, replaced.get(int(i))) for p, i in zip(pairs, indices, strict=True)]
        src, tgt_in, tgt_out = _padded(pairs, pad_to)
        alignment = None
        if self.links is not None:
            links, offsets = self.links
            ranges = [links[offsets[i] : offsets[i + 1]] for i in indices]
            alignment = dense_targets(ranges, tgt_in.shape[1], src.shape[1])  # (B, T, S)
        return Batch(src, tgt_in, tgt_out, alignment)

    def copies(self, indices: np.ndarray, added: Mapping[int, CasedIds]) -> list[IdPair]:
        """The pairs among `indices` that `added` gives other ids, with those ids (a target of
        None keeps the pair's own): case augmentation's copies, for `collate_pairs`."""
        return [_cased(self.pair(int(i)), added.get(int(i))) for i in indices if int(i) in added]


def collate_pairs(pairs: list[IdPair], pad_to: int = 1) -> Batch:
    """Pairs given by their ids, padded into one batch as `ParallelData.collate` pads."""
    return Batch(*_padded(pairs, pad_to))


def _padded(pairs: list[IdPair], pad_to: int) -> tuple[Tensor, Tensor, Tensor]:
    """(B, S) source + eos, (B, T) bos + target, (B, T) target + eos; lengths rounded up to a
    multiple of pad_to."""
    S = round_up(max(len(s) for s, _ in pairs) + 1, pad_to)
    T = round_up(max(len(t) for _, t in pairs) + 1, pad_to)
    src = np.full((len(pairs), S), PAD_ID, np.int64)
    tgt_in = np.full((len(pairs), T), PAD_ID, np.int64)
    tgt_out = np.full((len(pairs), T), PAD_ID, np.int64)
    for row, (s, t) in enumerate(pairs):
        src[row, : len(s)], src[row, len(s)] = s, EOS_ID
        tgt_in[row, 0], tgt_in[row, 1 : len(t) + 1] = BOS_ID, t
        tgt_out[row, : len(t)], tgt_out[row, len(t)] = t, EOS_ID
    src_t, tgt_in_t, tgt_out_t = (torch.from_numpy(x) for x in (src, tgt_in, tgt_out))
    return src_t, tgt_in_t, tgt_out_t


def _cased(pair: IdPair, other: CasedIds | None) -> IdPair:
    """The pair with its cased ids where `other` gives them (a target of None: its own)."""
    if other is None:
        return pair
    return other[0], pair[1] if other[1] is None else other[1]


def _flat(sentences: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(all ids, one after another; offsets: sentence i is ids[offsets[i]:offsets[i + 1]])."""
    offsets = np.zeros(len(sentences) + 1, np.int64)
    np.cumsum([len(s) for s in sentences], out=offsets[1:])
    ids = np.concatenate([np.asarray(s, np.int64) for s in sentences] or [np.zeros(0, np.int64)])
    return ids, offsets
