"""Reading an image file as a model input, and writing a scene or digit as a PNG file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError
from torch import Tensor

from aiayn.files import atomic_write


def read_image(path: Path, size: int) -> Tensor:
    """A greyscale (1, size, size) tensor in [0, 1], ink bright on a dark ground like the digits."""
    path = Path(path)
    try:
        with Image.open(path) as image:
            grey = image.convert("L").resize((size, size), Image.Resampling.BILINEAR)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such image file") from None
    except UnidentifiedImageError:
        raise ValueError(f"{path}: not an image that Pillow can read; give a PNG or JPEG") from None
    return torch.tensor(np.asarray(grey, dtype=np.float32) / 255.0)[None]  # (1, size, size)


def write_image(image: Tensor, path: Path) -> Path:
    """A (1, Hp, Wp) tensor in [0, 1] as an 8-bit greyscale PNG, written atomically."""
    path = Path(path)
    pixels = (image.squeeze(0).clamp(0, 1) * 255).round().to(torch.uint8).numpy()
    atomic_write(path, lambda tmp: Image.fromarray(pixels, mode="L").save(tmp, format="PNG"))
    return path
