"""Subword regularisation (`aiayn train --set subword_sampling=ALPHA`): each epoch the training
sources (with `subword_sampling_sides=both` the targets too) are segmented anew by the run's
SentencePiece model with sampling on - BPE-dropout (Provilkov et al. 2020) for the BPE that
`aiayn prepare` learns, each merge left out with probability ALPHA; for a unigram model,
Kudo's (2018) sampling with smoothing ALPHA. The model meets a word in many segmentations and
learns its pieces' make-up, which helps most where the corpus is small. Validation and test
data keep their prepared pieces, as translation does.

An epoch's pieces are a pure function of (seed, epoch): the lines are drawn in fixed chunks,
each with SentencePiece's generator seeded from (seed, epoch, side, chunk), so a resumed run
gets the pieces of an uninterrupted one. The sampler batches by the new lengths; a line whose
sampled pieces no longer fit the token budget keeps its prepared ones. While an epoch is
trained, the next one is drawn in a worker thread (SentencePiece lets go of the GIL), so an
update waits for none of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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


class SubwordSampling:
    """Each epoch's training split with sampled pieces (the current epoch's kept, the next
    one's drawn ahead)."""

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
        self._current: tuple[int, ParallelData] | None = None
        self._ahead: tuple[int, Future[ParallelData]] | None = None
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="subword-sampling")

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
        """The split with this epoch's pieces; the next epoch's are drawn meanwhile."""
        if self._current is None or self._current[0] != epoch:
            ahead = self._ahead
            if ahead is None or ahead[0] != epoch:  # the first epoch, or a resumed run's
                if ahead is not None:
                    ahead[1].cancel()  # not needed; one already under way ends first
                ahead = (epoch, self._worker.submit(self.draw, epoch))
            data = ahead[1].result()
            self._current = (epoch, data)
            self._ahead = (epoch + 1, self._worker.submit(self.draw, epoch + 1))
        return self._current[1]

    def draw(self, epoch: int) -> ParallelData:
        """The split with the pieces of an epoch, drawn now (a pure function of seed and epoch)."""
        src = self._sampled(0, epoch)
        tgt = self._sampled(1, epoch) if self.sides == "both" else None
        return self.data.resegmented(src, tgt)

    def _sampled(self, side: int, epoch: int) -> FlatIds:
        """One side's lines drawn anew: (flat ids, (N + 1,) offsets)."""
        path, n = self.texts[side], len(self.data)
        ids, lengths = [], []
        for chunk, (start, lines) in enumerate(_chunks(path, CHUNK_LINES)):
            seed = chunk_seed(self.seed, epoch, side, chunk)
            drawn = self.tokenizer.sample(lines, self.alpha, seed)
            for i, line in enumerate(drawn):
                if round_up(len(line) + 1, self.pad_to) > self.max_tokens and start + i < n:
                    drawn[i] = self.data.pair(start + i)[side].tolist()  # too long: as prepared
            ids.append(np.fromiter(itertools.chain.from_iterable(drawn), np.int32))
            lengths.append(np.fromiter(map(len, drawn), np.int64, len(drawn)))
        found = sum(map(len, lengths))
        if found != n:
            raise DataError(
                f"{path}: {found} lines for {n} encoded pairs; subword_sampling re-encodes "
                f"these lines: re-run `aiayn prepare --out {path.parent}`"
            )
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.concatenate(lengths) if lengths else [], out=offsets[1:])
        return np.concatenate(ids) if ids else np.zeros(0, np.int32), offsets


def _chunks(path: Path, size: int) -> Iterator[tuple[int, list[str]]]:
    """(the first line's number, up to `size` lines) at a time, newlines removed."""
    if not path.is_file():
        raise DataError(f"{path}: missing; subword_sampling needs the split's text to sample it")
    with open(path, encoding="utf-8") as f:
        for start in itertools.count(0, size):
            lines = [line.rstrip("\n") for line in itertools.islice(f, size)]
            if not lines:
                return
            yield start, lines


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
