"""Text in, text out: tokenize, sort by length, batch, decode, detokenize, restore order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from aiayn.data.vocab import Tokenizer
from aiayn.model import Transformer
from aiayn.model.transformer import WEIGHTS_FILE

Decoder = Callable[[Transformer, Tensor], list[list[int]]]


def source_batch(ids: list[list[int]], eos_id: int, pad_id: int, device) -> Tensor:
    """Sentences of ids -> (B, S) with eos appended and right padding."""
    S = max(len(x) for x in ids) + 1
    batch = np.full((len(ids), S), pad_id, dtype=np.int64)
    for row, x in enumerate(ids):
        batch[row, : len(x)] = x
        batch[row, len(x)] = eos_id
    return torch.from_numpy(batch).to(device)


def length_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Indices sorted by length, cut into batches of at most max_tokens padded source tokens."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, current, longest = [], [], 0
    for i in order:
        longest_if = max(longest, lengths[i] + 1)
        if current and (len(current) + 1) * longest_if > max_tokens:
            batches.append(current)
            current, longest_if = [], lengths[i] + 1
        current.append(i)
        longest = longest_if
    if current:
        batches.append(current)
    return batches


def translate_lines(
    model: Transformer,
    tokenizer: Tokenizer,
    lines: list[str],
    decode: Decoder,
    max_tokens: int = 4096,
) -> list[str]:
    """Translations of `lines`, in their order; an empty line gives an empty line."""
    device = next(model.parameters()).device
    cfg = model.cfg
    ids = tokenizer.encode(lines)
    outputs: list[list[int]] = [[] for _ in lines]
    todo = [i for i, x in enumerate(ids) if x]
    for batch in length_batches([len(ids[i]) for i in todo], max_tokens):
        rows = [todo[j] for j in batch]
        src = source_batch([ids[i] for i in rows], cfg.eos_id, cfg.pad_id, device)
        for i, hyp in zip(rows, decode(model, src), strict=True):
            outputs[i] = hyp
    return tokenizer.decode(outputs)


def resolve_model_dir(path: str | Path) -> Path:
    """A model directory from what a user names: a checkpoint or model directory itself, or a
    run directory (its best checkpoint, else its latest)."""
    from aiayn.train import checkpoint as ckpt

    path = Path(path)
    if (path / WEIGHTS_FILE).is_file():
        return path
    best = path / ckpt.CHECKPOINTS / ckpt.BEST
    if (best / WEIGHTS_FILE).is_file():
        return best
    last = ckpt.latest(path)
    if last is not None:
        return last.path
    raise FileNotFoundError(
        f"{path}: no model here (no {WEIGHTS_FILE}, no checkpoints); give a run directory, a "
        "checkpoint directory or one written by `aiayn average`"
    )


def load_translator(path: str | Path, device: str | torch.device = "cpu"):
    """(model in eval mode, its tokenizer) from a run, checkpoint or model directory."""
    directory = resolve_model_dir(path)
    model = Transformer.load(directory, device=device).eval()
    return model, Tokenizer(directory)
