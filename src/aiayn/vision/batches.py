"""Batches of each task, for training (new at every step, seeded by it) and for scoring."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from aiayn.vision.data import Scene, digits, eval_seeds, make_scenes, shift_augment, train_seeds


@dataclass(frozen=True)
class ImageBatch:
    images: Tensor  # (B, 1, Hp, Wp)
    labels: Tensor | None = None  # classify: (B,) digit classes
    masks: Tensor | None = None  # segment: (B, Hp, Wp)
    scenes: tuple[Scene, ...] = ()  # detect: per image, labels and boxes


def stack_scenes(scenes: list[Scene]) -> ImageBatch:
    images = torch.stack([s.image for s in scenes])  # (B, 1, Hp, Wp)
    return ImageBatch(images, masks=torch.stack([s.mask for s in scenes]), scenes=tuple(scenes))


def training_batch(
    task: str, step: int, batch_size: int, seed: int, image_size: int, augment: bool
) -> ImageBatch:
    """The batch of one training step: the same on resume."""
    if task != "classify":
        return stack_scenes(make_scenes("train", train_seeds(step, batch_size, seed), image_size))
    images, labels = digits("train")
    generator = torch.Generator().manual_seed(1_000_003 * seed + step)
    chosen = torch.randint(len(labels), (batch_size,), generator=generator)
    x = images[chosen][:, None]  # (B, 1, 8, 8)
    return ImageBatch(shift_augment(x, generator) if augment else x, labels=labels[chosen])


def eval_batches(task: str, split: str, count: int, image_size: int, batch_size: int = 128):
    """The fixed images of a split to score: every digit of it (classify), or its first `count`
    scenes (detect, segment). Yields `ImageBatch`es."""
    if task == "classify":
        images, labels = digits(split)
        for i in range(0, len(labels), batch_size):
            yield ImageBatch(images[i : i + batch_size, None], labels=labels[i : i + batch_size])
        return
    seeds = list(eval_seeds(count))
    for i in range(0, len(seeds), batch_size):
        yield stack_scenes(make_scenes(split, seeds[i : i + batch_size], image_size))
