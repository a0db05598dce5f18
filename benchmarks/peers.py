"""The peers the benchmarks measure aiayn against, each built as its users build it.

Same sizes as an aiayn `ModelConfig`; weights are random (speed does not depend on them).
"""

from __future__ import annotations

import math
import platform
import subprocess

import torch
from torch import nn

from aiayn.config import ModelConfig
from aiayn.model.positional import sinusoidal_encoding


class TorchTransformer(nn.Module):
    """`torch.nn.Transformer` with what a user adds around it: scaled embeddings plus sinusoids
    with dropout on the sum (as ours), a causal mask, key-padding masks, a tied projection."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.core = nn.Transformer(
            d_model=cfg.d_model,
            nhead=cfg.n_heads,
            num_encoder_layers=cfg.n_encoder_layers,
            num_decoder_layers=cfg.n_decoder_layers,
            dim_feedforward=cfg.d_ff,
            dropout=cfg.dropout,
            batch_first=True,
            norm_first=cfg.norm_first,
        )
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.dropout = nn.Dropout(cfg.dropout)

    def _embed(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        pe = sinusoidal_encoding(positions, self.cfg.d_model, self.cfg.positional)  # (L, D)
        return self.dropout(self.embed(tokens) * math.sqrt(self.cfg.d_model) + pe)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """(B, S), (B, T) ids -> (B, T, V) logits."""
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1])
        ignore = src == self.cfg.pad_id  # torch's polarity: True = ignore
        h = self.core(
            self._embed(src),
            self._embed(tgt_in),
            tgt_mask=causal,
            tgt_is_causal=True,
            src_key_padding_mask=ignore,
            memory_key_padding_mask=ignore,
        )  # (B, T, D)
        return h @ self.embed.weight.t()  # (B, T, V)


def hf_marian(cfg: ModelConfig):
    """Hugging Face `MarianMTModel` of the same size, with its default attention implementation."""
    from transformers import MarianConfig, MarianMTModel

    config = MarianConfig(
        vocab_size=cfg.vocab_size,
        d_model=cfg.d_model,
        encoder_layers=cfg.n_encoder_layers,
        decoder_layers=cfg.n_decoder_layers,
        encoder_attention_heads=cfg.n_heads,
        decoder_attention_heads=cfg.n_heads,
        encoder_ffn_dim=cfg.d_ff,
        decoder_ffn_dim=cfg.d_ff,
        dropout=cfg.dropout,
        max_position_embeddings=1024,
        scale_embedding=True,
        pad_token_id=cfg.pad_id,
        eos_token_id=cfg.eos_id,
        decoder_start_token_id=cfg.bos_id,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    return MarianMTModel(config)


def cpu_model() -> str:
    """The CPU's model name, as lscpu prints it."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"
