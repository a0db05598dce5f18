"""`freeze`: parameters a fine-tuning run leaves as it found them. They take no gradient, so
the optimizer never holds state for them and never moves them (the usual variants of Hugging
Face's Marian fine-tuning examples, `--freeze_embeds` and `--freeze_encoder`)."""

from __future__ import annotations

from torch import nn

from aiayn.config.train import Freeze
from aiayn.model import Transformer


def frozen_prefixes(model: Transformer, freeze: Freeze) -> tuple[str, ...]:
    """The names (prefixes of `named_parameters`) of what `freeze` holds still.

    "embeddings": the embedding tables; with tied embeddings the one shared matrix, which is
    the output projection too. "encoder": what only the encoder uses, its layers (and final
    norm, pre-norm), and the source embedding where the decoder has its own.
    """
    if freeze == "embeddings":
        return ("src_embed.", "tgt_embed.")
    if freeze == "encoder":
        own_table = ("src_embed.",) if not model.cfg.tie_embeddings else ()
        return ("encoder_layers.", "encoder_norm.", *own_table)
    return ()


def trainable(model: Transformer, freeze: Freeze) -> list[nn.Parameter]:
    """Mark the frozen parameters as taking no gradient; the others, for the optimizer."""
    prefixes = frozen_prefixes(model, freeze)
    kept = []
    for name, param in model.named_parameters():
        param.requires_grad_(not name.startswith(prefixes))
        if param.requires_grad:
            kept.append(param)
    return kept
