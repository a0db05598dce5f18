"""What the model attends to when it translates a sentence: every attention weight of the
teacher-forced pass over its translation (for `aiayn plot attention` and the web page)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from aiayn.config import DecodeConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.translate import decoder, source_batch
from aiayn.model import AttentionMaps


class AttendingModel(DecodingModel[Any], Protocol):
    """A model whose attention weights can be read: `Transformer` and `CompiledModel`."""

    def attention_maps(self, src: torch.Tensor, tgt_in: torch.Tensor) -> AttentionMaps:
        """Every attention weight of a teacher-forced pass."""
        ...


@dataclass(frozen=True)
class Attention:
    translation: str
    source: list[str]  # source pieces + </s>: the keys of encoder and cross-attention
    target_in: list[str]  # <s> + output pieces: the decoder's inputs (its self-attention keys)
    target_out: list[str]  # output pieces + </s>: what each decoder position produced
    encoder: list[np.ndarray]  # per layer (S, S)
    decoder: list[np.ndarray]  # per layer (T, T)
    cross: list[np.ndarray]  # per layer (T, S)


@torch.inference_mode()
def attention_for(
    model: AttendingModel,
    tokenizer: Tokenizer,
    sentence: str,
    beam: int = 4,
    head: int | None = None,
) -> Attention:
    """Translate one sentence, then read every attention weight of the teacher-forced pass over
    its translation: one head's, or the mean of the heads."""
    ids = tokenizer.encode([sentence])[0]
    if not ids:
        raise ValueError("nothing to translate: the sentence is empty")
    src = source_batch([ids], model.cfg.eos_id, model.cfg.pad_id, next(model.parameters()).device)
    output = decoder(DecodeConfig(beam=beam))(model, src, [0])[0]
    return attention_of(model, tokenizer, ids, output, head)


@torch.inference_mode()
def attention_of(
    model: AttendingModel,
    tokenizer: Tokenizer,
    ids: list[int],
    output: list[int],
    head: int | None = None,
) -> Attention:
    """Every attention weight of the teacher-forced pass of a found translation over its source
    (one pass: no second search).

    Args:
        ids: the source pieces' ids, without eos.
        output: the translation's ids, without bos and eos.
        head: one head's weights, or None for the mean of the heads.
    """
    cfg = model.cfg
    if head is not None and not 0 <= head < cfg.n_heads:
        raise ValueError(f"--head {head}: the model has heads 0..{cfg.n_heads - 1}")
    src = source_batch([ids], cfg.eos_id, cfg.pad_id, next(model.parameters()).device)  # (1, S)
    tgt_in = torch.tensor([[cfg.bos_id, *output]], device=src.device)  # (1, T)
    maps = model.attention_maps(src, tgt_in)

    def pick(layers) -> list[np.ndarray]:
        return [
            (w[0].mean(0) if head is None else w[0, head]).float().cpu().numpy() for w in layers
        ]

    source, found = tokenizer.pieces(ids), tokenizer.pieces(output)
    return Attention(
        translation=tokenizer.decode([output])[0],
        source=[*source, "</s>"],
        target_in=["<s>", *found],
        target_out=[*found, "</s>"],
        encoder=pick(maps.encoder),
        decoder=pick(maps.decoder_self),
        cross=pick(maps.cross),
    )
