"""Images that install with a package: scikit-learn's 1,797 real 8x8 handwritten digits, and
scenes composed from them for detection and segmentation, seeded and made on demand.

The digits are split once, by a fixed permutation, into train / valid / test; a scene is built
only from the digits of its own split, so test scenes hold digits no model has seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

SPLITS = ("train", "valid", "test")
_SPLIT_SEED = 20170612  # fixed forever: changing it would leak test digits into training
_TEST_FRACTION, _VALID_FRACTION = 0.2, 0.1
INK = 0.3  # a scene's pixel belongs to a digit where the digit's intensity exceeds this


@cache
def digits(split: str) -> tuple[Tensor, Tensor]:
    """One split of the digits: (n, 8, 8) float images in [0, 1] and (n,) labels 0-9."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError("the digits need scikit-learn: pip install 'aiayn[vision]'") from None
    data = load_digits()
    order = np.random.default_rng(_SPLIT_SEED).permutation(len(data.target))
    n_test = round(len(order) * _TEST_FRACTION)
    n_valid = round(len(order) * _VALID_FRACTION)
    parts = {"test": order[:n_test], "valid": order[n_test : n_test + n_valid]}
    parts["train"] = order[n_test + n_valid :]
    chosen = parts[split]
    images = torch.tensor(data.images[chosen] / 16.0, dtype=torch.float32)  # (n, 8, 8)
    return images, torch.tensor(data.target[chosen], dtype=torch.long)


def shift_augment(images: Tensor, generator: torch.Generator) -> Tensor:
    """Each (B, C, h, w) image moved by up to one pixel in each direction, zeros shifted in."""
    B, _, h, w = images.shape
    padded = F.pad(images, (1, 1, 1, 1))  # (B, C, h+2, w+2)
    dy, dx = torch.randint(0, 3, (2, B), generator=generator).tolist()
    return torch.stack([padded[i, :, dy[i] : dy[i] + h, dx[i] : dx[i] + w] for i in range(B)])


@dataclass(frozen=True)
class Scene:
    """A canvas with a few digits: exact boxes and pixel masks."""

    image: Tensor  # (1, Hp, Wp) in [0, 1]
    labels: Tensor  # (M,) digit classes
    boxes: Tensor  # (M, 4) (cx, cy, w, h), relative to the canvas: the digit's inked pixels
    mask: Tensor  # (Hp, Wp) 0 = background, 1 + class where a digit's ink is


def make_scene(
    split: str, seed: int, size: int = 32, max_digits: int = 3, scale: tuple[int, int] = (10, 16)
) -> Scene:
    """Scene number `seed` of a split: 1..max_digits digits of the split, each resized to a side
    in `scale` and placed at random without overlapping another."""
    images, labels = digits(split)
    rng = np.random.default_rng([seed, SPLITS.index(split)])
    canvas = torch.zeros(size, size)
    mask = torch.zeros(size, size, dtype=torch.long)
    taken: list[tuple[int, int, int, int]] = []
    kept_labels, boxes = [], []
    for _ in range(int(rng.integers(1, max_digits + 1))):
        side = int(rng.integers(scale[0], scale[1] + 1))
        place = _free_place(rng, size, side, taken)
        if place is None:
            continue
        y, x = place
        index = int(rng.integers(len(labels)))
        digit = F.interpolate(images[index][None, None], size=(side, side), mode="bilinear")[0, 0]
        digit = digit.clamp(0, 1)  # (side, side)
        canvas[y : y + side, x : x + side] = digit
        ink = digit > INK
        mask[y : y + side, x : x + side][ink] = int(labels[index]) + 1
        rows, cols = ink.any(dim=1).nonzero()[:, 0], ink.any(dim=0).nonzero()[:, 0]
        y0, y1 = y + int(rows[0]), y + int(rows[-1]) + 1
        x0, x1 = x + int(cols[0]), x + int(cols[-1]) + 1
        boxes.append(
            [(x0 + x1) / 2 / size, (y0 + y1) / 2 / size, (x1 - x0) / size, (y1 - y0) / size]
        )
        kept_labels.append(int(labels[index]))
        taken.append((y, x, side, side))
    return Scene(
        canvas[None],
        torch.tensor(kept_labels, dtype=torch.long),
        torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
        mask,
    )


def _free_place(rng: np.random.Generator, size: int, side: int, taken: list) -> tuple | None:
    """A top-left corner where a side x side square overlaps no taken one (20 tries)."""
    for _ in range(20):
        y, x = (int(v) for v in rng.integers(0, size - side + 1, size=2))
        if all(
            y + side <= ty or ty + th <= y or x + side <= tx or tx + tw <= x
            for ty, tx, th, tw in taken
        ):
            return y, x
    return None


def make_scenes(split: str, seeds: range | list[int], size: int = 32) -> list[Scene]:
    return [make_scene(split, s, size) for s in seeds]


def eval_seeds(count: int) -> range:
    """The scenes scored at validation and test: always the same ones."""
    return range(count)


def train_seeds(step: int, batch_size: int, seed: int) -> range:
    """The training scenes of one step: new ones at every step, the same again on resume."""
    start = 1_000_000 * seed + step * batch_size
    return range(start, start + batch_size)
