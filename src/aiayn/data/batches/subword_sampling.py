"""Subword regularisation (`aiayn train --set subword_sampling=ALPHA`): each epoch the training
sources (with `subword_sampling_sides=both` the targets too) are segmented anew by BPE-dropout
(Provilkov et al. 2020) over the run's SentencePiece BPE: each merge left out with probability
ALPHA. The model meets a word in many segmentations and learns its pieces' make-up, which
helps most where the corpus is small. Validation and test data keep their prepared pieces, as
translation does. The draws are our own (data/bpe_dropout.py): SentencePiece's sampling gives
other pieces for the same seed in another process, and a resumed run is another process.

An epoch's pieces are a pure function of (seed, epoch): the lines are drawn in fixed chunks,
each with a generator seeded from (seed, epoch, side, chunk), so a resumed run gets the pieces
of an uninterrupted one. The sampler batches by the new lengths; a line whose sampled pieces
no longer fit the token budget keeps its prepared ones. While an epoch is trained, the next
one is drawn in a worker process (the draw is Python; in a thread it would hold up the
updates), so an update waits for none of it.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aiayn.data.batches.dataset import FlatIds, ParallelData
from aiayn.data.batches.sampler import round_up
from aiayn.data.sources import DataError
from aiayn.data.tokenizer import Tokenizer

SAMPLING_STREAM = 0x5B3D  # the draw's own seeds: [seed, epoch] alone orders the batches
CHUNK_LINES = 10_000  # lines drawn under one seed: memory stays that of a chunk's lists


def chunk_seed(seed: int, epoch: int, side: int, chunk: int) -> int:
    """SentencePiece's seed (32 bits) for one chunk of one side's lines in an epoch."""
    state = np.random.SeedSequence([seed, epoch, SAMPLING_STREAM, side, chunk]).generate_state(1)
    return int(state[0])


@dataclass(frozen=True)
class Draw:
    """What an epoch's draw needs, sent to the worker process."""

    tokenizer: Path  # the run's SentencePiece model
    texts: tuple[Path, ...]  # the lines to sample: the sources, or the sources and the targets
    alpha: float
    seed: int


def sample_epoch(draw: Draw, epoch: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each side's lines drawn anew for an epoch: (flat int32 ids, (N,) lengths) per side. A
    pure function of its arguments, run in the worker process (or here)."""
    tokenizer, found = _tokenizer(draw.tokenizer), []
    for side, path in enumerate(draw.texts):
        ids, lengths = [], []
        for chunk, lines in enumerate(_chunks(path, CHUNK_LINES)):
            drawn = tokenizer.sample(lines, draw.alpha, chunk_seed(draw.seed, epoch, side, chunk))
            ids.append(np.fromiter(itertools.chain.from_iterable(drawn), np.int32))
            lengths.append(np.fromiter(map(len, drawn), np.int64, len(drawn)))
        empty = [np.zeros(0, np.int32)], [np.zeros(0, np.int64)]
        found.append((np.concatenate(ids or empty[0]), np.concatenate(lengths or empty[1])))
    return found


@functools.lru_cache(maxsize=2)
def _tokenizer(path: Path) -> Tokenizer:
    """The worker's tokenizer, opened once."""
    return Tokenizer(path)


class SubwordSampling:
    """Each epoch's training split with sampled pieces (the current epoch's kept, the next
    one's drawn ahead in a worker process)."""

    def __init__(
        self,
        alpha: float,
        seed: int,
        texts: tuple[Path, Path],
        tokenizer: Tokenizer,
        data: ParallelData,
        max_tokens: int,
        pad_to: int = 1,
        sides: str = "source",
    ) -> None:
        """texts: the split's source and target text (the lines its ids were encoded from);
        data: the split as prepared (its ids stand in for a line too long once sampled);
        sides: "source", or "both" (the targets sampled too)."""
        self.alpha, self.seed, self.texts, self.tokenizer = alpha, seed, texts, tokenizer
        self.data, self.max_tokens, self.pad_to, self.sides = data, max_tokens, pad_to, sides
        sampled = texts if sides == "both" else texts[:1]
        self.job = Draw(tokenizer.path, tuple(sampled), alpha, seed)
        self._current: tuple[int, ParallelData] | None = None
        self._ahead: tuple[int, Future] | None = None
        self._worker: ProcessPoolExecutor | None = None  # started on the first epoch asked for

    def state_settings(self) -> dict[str, Any]:
        """What the sampler's state records (the sides only where both are sampled)."""
        settings: dict[str, Any] = {"subword_sampling": self.alpha}
        if self.sides != "source":
            settings["subword_sides"] = self.sides
        return settings

    def lengths(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """(N,) source and target pieces of every pair in this epoch (for the sampler)."""
        data = self.epoch(epoch)
        return data.src_lengths, data.tgt_lengths

    def epoch(self, epoch: int) -> ParallelData:
        """The split with this epoch's pieces; the next epoch's are drawn meanwhile, in a
        process of its own (the draw is Python: in a thread it would hold up the updates)."""
        if self._current is None or self._current[0] != epoch:
            if self._worker is None:
                self._worker = ProcessPoolExecutor(1, multiprocessing.get_context("spawn"))
            ahead = self._ahead
            if ahead is None or ahead[0] != epoch:  # the first epoch, or a resumed run's
                if ahead is not None:
                    ahead[1].cancel()  # not needed; one already under way ends first
                ahead = (epoch, self._worker.submit(sample_epoch, self.job, epoch))
            self._current = (epoch, self._resegmented(ahead[1].result()))
            self._ahead = (epoch + 1, self._worker.submit(sample_epoch, self.job, epoch + 1))
        return self._current[1]

    def draw(self, epoch: int) -> ParallelData:
        """The split with the pieces of an epoch, drawn here and now (what `epoch` gives)."""
        return self._resegmented(sample_epoch(self.job, epoch))

    def _resegmented(self, drawn: list[tuple[np.ndarray, np.ndarray]]) -> ParallelData:
        sides = [self._fitted(side, *found) for side, found in enumerate(drawn)]
        return self.data.resegmented(sides[0], sides[1] if len(sides) > 1 else None)

    def _fitted(self, side: int, ids: np.ndarray, lengths: np.ndarray) -> FlatIds:
        """(flat ids, (N + 1,) offsets) of one side's draw, a line too long for the token
        budget once sampled back in its prepared pieces."""
        path, n = self.texts[side], len(self.data)
        if len(lengths) != n:
            raise DataError(
                f"{path}: {len(lengths)} lines for {n} encoded pairs; subword_sampling "
                f"re-encodes these lines: re-run `aiayn prepare --out {path.parent}`"
            )
        too_long = np.flatnonzero(round_up(lengths + 1, self.pad_to) > self.max_tokens)
        if len(too_long):
            lines = np.split(ids, np.cumsum(lengths)[:-1])
            for i in too_long.tolist():
                lines[i] = self.data.pair(i)[side].astype(np.int32)
                lengths[i] = len(lines[i])
            ids = np.concatenate(lines)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return ids, offsets


def _chunks(path: Path, size: int) -> Iterator[list[str]]:
    """Up to `size` lines at a time, newlines removed."""
    if not path.is_file():
        raise DataError(f"{path}: missing; subword_sampling needs the split's text to sample it")
    with open(path, encoding="utf-8") as f:
        while lines := [line.rstrip("\n") for line in itertools.islice(f, size)]:
            yield lines


def subword_sampling_for(cfg, data, tokenizer: Path, train: ParallelData) -> SubwordSampling | None:
    """The run's subword sampling (`cfg.subword_sampling` of a TrainConfig) over the training
    split of `data` (a DataDir), prepared as `train`; None when off."""
    if not cfg.subword_sampling:
        return None
    return SubwordSampling(
        cfg.subword_sampling,
        cfg.seed,
        (data.text("train", "src"), data.text("train", "tgt")),
        Tokenizer(tokenizer),
        train,
        cfg.max_tokens,
        cfg.pad_to,
        cfg.subword_sampling_sides,
    )
