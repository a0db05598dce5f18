"""The passes of one update: this process's batches and, with `case_augment_mode=add`, one more
for the cased copies of their pairs (`aiayn.data.case_augment`).

DDP all-reduces the gradients after an update's last pass, so every process must make as many
passes: the copies' pass is made where every process has copies, and an update in which one
has none goes without them everywhere (rare: a tenth of the pairs cased leaves a batch of n
pairs without a copy with probability 0.9^n).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from aiayn.data.batches.dataset import Batch, IdPair, collate_pairs


def grouped(
    stream: Iterator[tuple[Batch, list[IdPair]]], update_freq: int, pad_to: int
) -> Iterator[tuple[list[Batch], Batch | None]]:
    """Updates from a stream of batches, each with its pairs' cased copies: `update_freq`
    batches, and the copies of all of them as one batch (None where there are none). Ends
    where the stream cannot fill an update."""
    while len(items := list(itertools.islice(stream, update_freq))) == update_freq:
        copies = [pair for _, some in items for pair in some]
        yield [batch for batch, _ in items], collate_pairs(copies, pad_to) if copies else None


def update_passes(
    batches: list[Batch],
    copies: Batch | None,
    adding: bool,
    all_sum: Callable[[list[float]], list[float]],
) -> tuple[list[Batch], int, float]:
    """The update's batches, this process's target tokens, and all processes' (what the loss is
    divided by). adding: case_augment_mode=add; all_sum: sums numbers over the processes."""
    local = sum(b.n_tgt_tokens for b in batches)
    if not adding:
        (total,) = all_sum([float(local)])
        return batches, local, total
    extra = copies.n_tgt_tokens if copies is not None else 0
    total, extra_total, without = all_sum([float(local), float(extra), float(copies is None)])
    if without or copies is None:
        return batches, local, total
    return [*batches, copies], local + extra, total + extra_total
