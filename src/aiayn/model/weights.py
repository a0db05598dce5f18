"""A weights file checked against the config beside it: its size before the model is built, its
tensors' names and shapes after (`Transformer.load`)."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

from safetensors import safe_open

from aiayn.config import ModelConfig
from aiayn.model.params import count_parameters


def check_size(weights: Path, cfg: ModelConfig, config_file: Path) -> None:
    """The numbers the file's header lists against those the config's model has, before the
    model is built: a config damaged into 10^9 layers would otherwise be built, for minutes,
    until memory ran out (found by the fuzzed readers)."""
    with safe_open(str(weights), "pt") as f:  # reads the header only
        names = f.keys()  # a list (safe_open is not a mapping)
        found = sum(math.prod(f.get_slice(name).get_shape()) for name in names)
    expected = count_parameters(cfg)
    if found != expected:
        raise ValueError(
            f"{weights}: does not match {config_file}: it holds {found:,} numbers, the model "
            f"described there has {expected:,} parameters; put the config.json saved with "
            "these weights beside them"
        )


def describe_mismatch(expected: dict[str, tuple], found: dict[str, tuple]) -> str:
    """Say which tensors are missing, unexpected or of the wrong shape (a few of each)."""
    parts = []
    if missing := sorted(expected.keys() - found.keys()):
        parts.append(f"missing {missing[:5]}")
    if unexpected := sorted(found.keys() - expected.keys()):
        parts.append(f"unexpected {unexpected[:5]}")
    wrong = [
        f"{k} {found[k]} (expected {expected[k]})"
        for k in sorted(expected.keys() & found.keys())
        if expected[k] != found[k]
    ]
    if wrong:
        parts.append(f"wrong shapes {wrong[:5]}")
    return "; ".join(parts)


def weights_digest(weights: Path) -> str:
    """The sha256 of a weights file, read in pieces (a big model's file need not fit twice in
    memory): which weights a run began from, or a setting was chosen for."""
    digest = hashlib.sha256()
    with open(weights, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()
