"""Case augmentation (`aiayn train --set case_augment=P`): each epoch a fraction P of the
training pairs is upper- or title-cased, half each, on both sides, and re-encoded with the
run's SentencePiece model - the approach of the Firefox translation models
(mozilla/translations), so that ALL-CAPS and Title-Case input translates as ordinary text does.
With sides "source" (`--set case_augment_sides=source`) only the source is cased: the model
learns to answer capitals in ordinary case, and its decoder never meets the cased pieces.
With mode "add" (`--set case_augment_mode=add`) a cased pair does not take its ordinary pair's
place: the batches are those of P = 0, and the cased copies of an update's pairs are one more
batch of that update (the trainer's).

The choice is a pure function of (seed, epoch), drawn from its own random stream, so resuming
stays exact and the batch order of P = 0 is untouched. Replacing, the cased pairs' new lengths
are what the sampler batches by (an upper-cased line often has twice the pieces); adding, the
batches are those of P = 0 and the copies are batched apart. A cased pair that would no longer
fit the token budget on its own keeps its ordinary form (and has no copy). Only the chosen lines are
read, one pass over the text files per epoch, so memory stays that of the cased pairs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aiayn.data.batches.sampler import round_up
from aiayn.data.casing import title_case, upper_case
from aiayn.data.sources import DataError
from aiayn.data.tokenizer import Tokenizer

CASE_STREAM = 0xCA5E  # the draw's own stream: [seed, epoch] alone orders the batches


def choose(n_pairs: int, fraction: float, seed: int, epoch: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs cased in an epoch: round(fraction x n_pairs) of them, without replacement.

    Returns:
        (M,) sorted pair indices, and (M,) booleans: True = upper-cased, False = title-cased
        (half each; the odd one upper).
    """
    rng = np.random.default_rng([seed, epoch, CASE_STREAM])
    m = round(fraction * n_pairs)
    chosen = np.sort(rng.choice(n_pairs, m, replace=False))  # (M,)
    upper = rng.permutation(m) < (m + 1) // 2  # (M,)
    return chosen, upper


@dataclass(frozen=True)
class CasedEpoch:
    """One epoch's cased pairs: their ids, and every pair's length as the sampler sees it."""

    # pair -> (source ids, target ids; None: the pair's own target)
    cased: dict[int, tuple[np.ndarray, np.ndarray | None]]
    src_lengths: np.ndarray  # (N,) pieces, the cased pairs' new lengths included ("replace")
    tgt_lengths: np.ndarray  # (N,)
    added: bool = False  # True: each cased pair joins its ordinary one's batch ("add")

    @property
    def replaced(self) -> dict[int, tuple[np.ndarray, np.ndarray | None]] | None:
        """The pairs that take other ids in their batch (ParallelData.collate); None adding."""
        return None if self.added else self.cased

    @property
    def copied(self) -> dict[int, tuple[np.ndarray, np.ndarray | None]]:
        """The pairs whose cased copy joins their update (ParallelData.copies); {} replacing."""
        return self.cased if self.added else {}


class CaseAugment:
    """The cased pairs of each epoch of a training split (the last epoch's kept)."""

    def __init__(
        self,
        fraction: float,
        seed: int,
        texts: tuple[Path, Path],
        tokenizer: Tokenizer,
        lengths: tuple[np.ndarray, np.ndarray],
        max_tokens: int,
        pad_to: int = 1,
        sides: str = "both",
        mode: str = "replace",
    ) -> None:
        """texts: the split's source and target text (the lines its ids were encoded from);
        lengths: (N,) source and target pieces per pair, as the split holds them; sides:
        "both" or "source" (the target kept as the split holds it); mode: "replace" (a cased
        pair instead of its ordinary one) or "add" (beside it, in the same batch)."""
        self.fraction, self.seed, self.texts, self.tokenizer = fraction, seed, texts, tokenizer
        self.sides, self.mode = sides, mode
        self.src_lengths, self.tgt_lengths = (np.asarray(x, np.int64) for x in lengths)
        self.max_tokens, self.pad_to = max_tokens, pad_to
        for path in texts:
            n = _count_lines(path)
            if n != len(self.src_lengths):
                raise DataError(
                    f"{path}: {n} lines for {len(self.src_lengths)} encoded pairs; case_augment "
                    f"re-encodes these lines: re-run `aiayn prepare --out {path.parent}`"
                )
        self._last: tuple[int, CasedEpoch] | None = None

    def lengths(self, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """(N,) source and target pieces of every pair in this epoch (for the sampler)."""
        cased = self.epoch(epoch)
        return cased.src_lengths, cased.tgt_lengths

    def state_settings(self) -> dict[str, Any]:
        """What the sampler's state records (sides and mode only where not the default)."""
        settings: dict[str, Any] = {"case_augment": self.fraction}
        if self.sides != "both":
            settings["case_sides"] = self.sides
        if self.mode != "replace":
            settings["case_mode"] = self.mode
        return settings

    def epoch(self, epoch: int) -> CasedEpoch:
        if self._last is None or self._last[0] != epoch:
            self._last = (epoch, self._make(epoch))
        return self._last[1]

    def _make(self, epoch: int) -> CasedEpoch:
        chosen, upper = choose(len(self.src_lengths), self.fraction, self.seed, epoch)

        def cased(path: Path) -> list[list[int]]:
            pairs = zip(_read_lines(path, chosen), upper, strict=True)
            return self.tokenizer.encode(
                [upper_case(t) if up else title_case(t) for t, up in pairs]
            )

        sources = cased(self.texts[0])
        # source only: the target is the split's own (None in `cased`), not read again
        targets = cased(self.texts[1]) if self.sides == "both" else [None] * len(sources)
        src_lengths, tgt_lengths = self.src_lengths.copy(), self.tgt_lengths.copy()
        added = self.mode == "add"
        chosen_ids = {}
        for i, src, tgt in zip(chosen.tolist(), sources, targets, strict=True):
            tgt_len = len(tgt) if tgt is not None else int(tgt_lengths[i])
            longest = max(round_up(len(src) + 1, self.pad_to), round_up(tgt_len + 1, self.pad_to))
            if longest > self.max_tokens:  # too long for a batch of its own: left as it was
                continue
            chosen_ids[i] = (
                np.asarray(src, np.int64),
                None if tgt is None else np.asarray(tgt, np.int64),
            )
            if not added:  # an added copy leaves the batches as they are at P = 0
                src_lengths[i], tgt_lengths[i] = len(src), tgt_len
        return CasedEpoch(chosen_ids, src_lengths, tgt_lengths, added)


def _count_lines(path: Path) -> int:
    if not path.is_file():
        raise DataError(f"{path}: missing; case_augment needs the split's text to re-case it")
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def _read_lines(path: Path, wanted: np.ndarray) -> list[str]:
    """The lines at the sorted indices `wanted`, in one pass."""
    lines, targets = [], iter(wanted.tolist())
    nxt = next(targets, None)
    with open(path, encoding="utf-8") as f:
        for i, line in zip(itertools.count(), f):
            if nxt is None:
                break
            if i == nxt:
                lines.append(line.rstrip("\n"))
                nxt = next(targets, None)
    if len(lines) != len(wanted):
        raise DataError(f"{path}: shorter than its encoded pairs; re-run `aiayn prepare`")
    return lines


def case_augment_for(cfg, data, tokenizer: Path, train) -> CaseAugment | None:
    """The run's case augmentation (`cfg.case_augment` of a TrainConfig) over the training split
    of `data` (a DataDir) whose lengths `train` (ParallelData) holds; None when off."""
    if not cfg.case_augment:
        return None
    return CaseAugment(
        cfg.case_augment,
        cfg.seed,
        (data.text("train", "src"), data.text("train", "tgt")),
        Tokenizer(tokenizer),
        (train.src_lengths, train.tgt_lengths),
        cfg.max_tokens,
        cfg.pad_to,
        cfg.case_augment_sides,
        cfg.case_augment_mode,
    )
