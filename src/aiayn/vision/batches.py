"""Batches of each task, for training (new at every step, seeded by it) and for scoring."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from aiayn.vision.data import Scene, digits, eval_seeds, make_scenes, shift_augment, train_seeds


@dataclass(frozen=True)
class DigitBatch:
    """Digits to classify."""

    images: Tensor  # (B, 1, 8, 8)
    labels: Tensor  # (B,) digit classes


@dataclass(frozen=True)
class SceneBatch:
    """Scenes to detect digits in (their labels and boxes) or to segment (their masks)."""

    images: Tensor  # (B, 1, Hp, Wp)
    masks: Tensor  # (B, Hp, Wp) 0 = background, 1 + class where a digit's ink is
    scenes: tuple[Scene, ...]  # per image, labels and boxes


ImageBatch = DigitBatch | SceneBatch  # the batch of any task


def stack_scenes(scenes: list[Scene]) -> SceneBatch:
    images = torch.stack([s.image for s in scenes])  # (B, 1, Hp, Wp)
    return SceneBatch(images, torch.stack([s.mask for s in scenes]), tuple(scenes))


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
    return DigitBatch(shift_augment(x, generator) if augment else x, labels[chosen])


def digit_batches(split: str, batch_size: int = 128) -> Iterator[DigitBatch]:
    """Every digit of a split, to score (classify)."""
    images, labels = digits(split)
    for i in range(0, len(labels), batch_size):
        yield DigitBatch(images[i : i + batch_size, None], labels[i : i + batch_size])


def scene_batches(
    split: str, count: int, image_size: int, batch_size: int = 128
) -> Iterator[SceneBatch]:
    """The first `count` scenes of a split, always the same ones, to score (detect, segment)."""
    seeds = list(eval_seeds(count))
    for i in range(0, len(seeds), batch_size):
        yield stack_scenes(make_scenes(split, seeds[i : i + batch_size], image_size))
