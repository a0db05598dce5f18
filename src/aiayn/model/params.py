"""Closed-form parameter count, to check the built model and compare with the paper's sizes."""

from __future__ import annotations

from aiayn.config import ModelConfig

# Table 3 of the paper, for a ~37,000-token shared EN-DE vocabulary.
PAPER_PARAMETERS = {"base": 65_000_000, "big": 213_000_000}


def count_parameters(cfg: ModelConfig) -> int:
    """Number of trainable parameters of `Transformer(cfg)`, from the sizes alone.

    attention = 4 D^2 + 4 D  (W^Q, W^K, W^V, W^O and biases; heads add nothing)
    ffn       = 2 D d_ff + d_ff + D
    layernorm = 2 D
    """
    D, F, V = cfg.d_model, cfg.d_ff, cfg.vocab_size
    attention = 4 * D * D + 4 * D
    ffn = 2 * D * F + F + D
    norm = 2 * D
    encoder_layer = attention + ffn + 2 * norm
    decoder_layer = 2 * attention + ffn + 3 * norm
    embeddings = V * D if cfg.tie_embeddings else 3 * V * D  # source, target, output projection
    final_norms = 2 * norm if cfg.norm_first else 0
    return (
        embeddings
        + cfg.n_encoder_layers * encoder_layer
        + cfg.n_decoder_layers * decoder_layer
        + final_norms
    )
