"""The reference models: the peers the benchmarks measure aiayn against, which the parity tests
also check it against.

`TorchTransformer` and `hf_marian` are built as their users build them, with the sizes of an
aiayn `ModelConfig` and random weights (speed does not depend on them): the benchmarks time
these. `torch_like` and `marian_like` turn them into aiayn's exact function with its weights
copied over: `tests/model/test_parity_torch.py` and `test_parity_marian.py` compare logits with
them, and `decode_bench.py` hands CTranslate2 and Hugging Face the same weights as ours.

One copy for both users (why in `harness/__init__.py`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from aiayn.config import ModelConfig
from aiayn.model import Transformer
from aiayn.model.positional import sinusoidal_encoding

if TYPE_CHECKING:
    from transformers import MarianConfig, MarianMTModel

TORCH_ACTIVATION = {"relu": "relu", "gelu": "gelu", "swish": F.silu}
HF_ACTIVATION = {"relu": "relu", "gelu": "gelu", "swish": "swish"}


def copy_linear(dst, src) -> None:
    """Copy weight and bias between two modules that have both (Linear, LayerNorm)."""
    dst.weight.copy_(src.weight)
    dst.bias.copy_(src.bias)


# -- torch.nn.Transformer ------------------------------------------------------------------


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
            activation=TORCH_ACTIVATION[cfg.activation],
            layer_norm_eps=cfg.norm_eps,
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


@torch.no_grad()
def torch_like(ours: Transformer) -> TorchTransformer:
    """A `TorchTransformer` that computes exactly what `ours` does, with its weights, in eval mode.

    nn.Transformer always ends its stacks with a LayerNorm: a post-norm model has none, so they
    go. Nested tensors (an inference fast path) are turned off: the reference is the plain path.
    """
    ref = TorchTransformer(ours.cfg)
    ref.core.encoder.enable_nested_tensor = False
    ref.core.encoder.use_nested_tensor = False
    if ours.cfg.norm_first:
        copy_linear(ref.core.encoder.norm, ours.encoder_norm)
        copy_linear(ref.core.decoder.norm, ours.decoder_norm)
    else:
        ref.core.encoder.norm = None
        ref.core.decoder.norm = None
    ref.embed.weight.copy_(ours.src_embed.weight)
    for theirs, mine in zip(ref.core.encoder.layers, ours.encoder_layers, strict=True):
        _copy_torch_attention(theirs.self_attn, mine.self_attn)
        copy_linear(theirs.linear1, mine.ffn.w_1)
        copy_linear(theirs.linear2, mine.ffn.w_2)
        copy_linear(theirs.norm1, mine.self_attn_residual.norm)
        copy_linear(theirs.norm2, mine.ffn_residual.norm)
    for theirs, mine in zip(ref.core.decoder.layers, ours.decoder_layers, strict=True):
        _copy_torch_attention(theirs.self_attn, mine.self_attn)
        _copy_torch_attention(theirs.multihead_attn, mine.cross_attn)
        copy_linear(theirs.linear1, mine.ffn.w_1)
        copy_linear(theirs.linear2, mine.ffn.w_2)
        copy_linear(theirs.norm1, mine.self_attn_residual.norm)
        copy_linear(theirs.norm2, mine.cross_attn_residual.norm)
        copy_linear(theirs.norm3, mine.ffn_residual.norm)
    return ref.eval()


def _copy_torch_attention(dst: nn.MultiheadAttention, src) -> None:
    dst.in_proj_weight.copy_(src.w_qkv.weight)  # same stacked (3D, D) layout
    dst.in_proj_bias.copy_(src.w_qkv.bias)
    copy_linear(dst.out_proj, src.w_o)


# -- Hugging Face Marian -------------------------------------------------------------------


def marian_config(cfg: ModelConfig, **changes) -> MarianConfig:
    """A `MarianConfig` of the same sizes and special ids, one tied embedding; `changes` win."""
    from transformers import MarianConfig

    fields = {
        "vocab_size": cfg.vocab_size,
        "d_model": cfg.d_model,
        "encoder_layers": cfg.n_encoder_layers,
        "decoder_layers": cfg.n_decoder_layers,
        "encoder_attention_heads": cfg.n_heads,
        "decoder_attention_heads": cfg.n_heads,
        "encoder_ffn_dim": cfg.d_ff,
        "decoder_ffn_dim": cfg.d_ff,
        "scale_embedding": True,
        "pad_token_id": cfg.pad_id,
        "eos_token_id": cfg.eos_id,
        "decoder_start_token_id": cfg.bos_id,
        "share_encoder_decoder_embeddings": True,
        "tie_word_embeddings": True,
    }
    return MarianConfig(**(fields | changes))


def hf_marian(cfg: ModelConfig) -> MarianMTModel:
    """Hugging Face `MarianMTModel` of the same size, with its default attention implementation
    (and Marian's default activation)."""
    from transformers import MarianMTModel

    return MarianMTModel(marian_config(cfg, dropout=cfg.dropout, max_position_embeddings=1024))


def marian_like(ours: Transformer) -> MarianMTModel:
    """A `MarianMTModel` with our weights, in eval mode, computing what `ours` does when it is
    post-norm with `positional="concatenated"` (Marian's sin|cos layout)."""
    from transformers import MarianMTModel

    cfg = ours.cfg
    config = marian_config(
        cfg, activation_function=HF_ACTIVATION[cfg.activation], max_position_embeddings=256
    )
    config._attn_implementation = "eager"  # plain softmax attention, independent of SDPA
    marian = MarianMTModel(config).eval()
    copy_to_marian(ours, marian)
    return marian


@torch.no_grad()
def copy_to_marian(ours: Transformer, marian: MarianMTModel) -> None:
    """Our weights into a Marian model of the same sizes (its vocabulary in our order)."""
    marian.model.shared.weight.copy_(ours.src_embed.weight)
    for theirs, mine in zip(marian.model.encoder.layers, ours.encoder_layers, strict=True):
        _copy_marian_attention(theirs.self_attn, mine.self_attn)
        copy_linear(theirs.self_attn_layer_norm, mine.self_attn_residual.norm)
        copy_linear(theirs.fc1, mine.ffn.w_1)
        copy_linear(theirs.fc2, mine.ffn.w_2)
        copy_linear(theirs.final_layer_norm, mine.ffn_residual.norm)
    for theirs, mine in zip(marian.model.decoder.layers, ours.decoder_layers, strict=True):
        _copy_marian_attention(theirs.self_attn, mine.self_attn)
        copy_linear(theirs.self_attn_layer_norm, mine.self_attn_residual.norm)
        _copy_marian_attention(theirs.encoder_attn, mine.cross_attn)
        copy_linear(theirs.encoder_attn_layer_norm, mine.cross_attn_residual.norm)
        copy_linear(theirs.fc1, mine.ffn.w_1)
        copy_linear(theirs.fc2, mine.ffn.w_2)
        copy_linear(theirs.final_layer_norm, mine.ffn_residual.norm)
    assert marian.lm_head.weight.data_ptr() == marian.model.shared.weight.data_ptr()
    marian.final_logits_bias.zero_()


def _copy_marian_attention(dst, src) -> None:
    w_q, w_k, w_v = src.w_qkv.weight.chunk(3)
    b_q, b_k, b_v = src.w_qkv.bias.chunk(3)
    for proj, w, b in ((dst.q_proj, w_q, b_q), (dst.k_proj, w_k, b_k), (dst.v_proj, w_v, b_v)):
        proj.weight.copy_(w)
        proj.bias.copy_(b)
    copy_linear(dst.out_proj, src.w_o)
