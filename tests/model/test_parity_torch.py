"""Parity with torch.nn.Transformer: same weights, same logits (eval mode)."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from aiayn import Transformer
from aiayn.model.positional import sinusoidal_encoding
from tests.conftest import copy_linear, padded_batch, perturb_vectors, tiny_model

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

ACTIVATION = {"relu": "relu", "gelu": "gelu", "swish": F.silu}


class TorchReference(nn.Module):
    """torch.nn.Transformer plus the same embeddings, positions and tied output projection."""

    def __init__(self, ours: Transformer) -> None:
        super().__init__()
        cfg = ours.cfg
        self.cfg = cfg
        self.core = nn.Transformer(
            d_model=cfg.d_model,
            nhead=cfg.n_heads,
            num_encoder_layers=cfg.n_encoder_layers,
            num_decoder_layers=cfg.n_decoder_layers,
            dim_feedforward=cfg.d_ff,
            dropout=cfg.dropout,
            activation=ACTIVATION[cfg.activation],
            layer_norm_eps=cfg.norm_eps,
            batch_first=True,
            norm_first=cfg.norm_first,
        )
        self.core.encoder.enable_nested_tensor = False
        self.core.encoder.use_nested_tensor = False
        if not cfg.norm_first:  # nn.Transformer always adds final norms; post-norm has none
            self.core.encoder.norm = None
            self.core.decoder.norm = None
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        copy_weights(ours, self)

    def forward(self, src, tgt_in):
        cfg = self.cfg

        def embed(tokens):
            pe = sinusoidal_encoding(torch.arange(tokens.shape[1]), cfg.d_model, cfg.positional)
            return self.embed(tokens) * math.sqrt(cfg.d_model) + pe

        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1])
        ignore = src == cfg.pad_id  # torch's polarity: True = ignore
        h = self.core(
            embed(src),
            embed(tgt_in),
            tgt_mask=causal,
            src_key_padding_mask=ignore,
            memory_key_padding_mask=ignore,
        )
        return h @ self.embed.weight.t()


def copy_attention(dst: nn.MultiheadAttention, src) -> None:
    dst.in_proj_weight.copy_(src.w_qkv.weight)  # same stacked (3D, D) layout
    dst.in_proj_bias.copy_(src.w_qkv.bias)
    copy_linear(dst.out_proj, src.w_o)


@torch.no_grad()
def copy_weights(ours: Transformer, ref: TorchReference) -> None:
    ref.embed.weight.copy_(ours.src_embed.weight)
    for theirs, mine in zip(ref.core.encoder.layers, ours.encoder_layers, strict=True):
        copy_attention(theirs.self_attn, mine.self_attn)
        copy_linear(theirs.linear1, mine.ffn.w_1)
        copy_linear(theirs.linear2, mine.ffn.w_2)
        copy_linear(theirs.norm1, mine.self_attn_residual.norm)
        copy_linear(theirs.norm2, mine.ffn_residual.norm)
    for theirs, mine in zip(ref.core.decoder.layers, ours.decoder_layers, strict=True):
        copy_attention(theirs.self_attn, mine.self_attn)
        copy_attention(theirs.multihead_attn, mine.cross_attn)
        copy_linear(theirs.linear1, mine.ffn.w_1)
        copy_linear(theirs.linear2, mine.ffn.w_2)
        copy_linear(theirs.norm1, mine.self_attn_residual.norm)
        copy_linear(theirs.norm2, mine.cross_attn_residual.norm)
        copy_linear(theirs.norm3, mine.ffn_residual.norm)
    if ours.cfg.norm_first:
        copy_linear(ref.core.encoder.norm, ours.encoder_norm)
        copy_linear(ref.core.decoder.norm, ours.decoder_norm)


@pytest.mark.parametrize("activation", ["relu", "gelu", "swish"])
@pytest.mark.parametrize("positional", ["interleaved", "concatenated"])
def test_logits_equal_torch_nn_transformer(norm_first, activation, positional):
    ours = tiny_model(seed=1, norm_first=norm_first, activation=activation, positional=positional)
    perturb_vectors(ours)
    ref = TorchReference(ours).eval()
    src = padded_batch([7, 4, 9], ours.cfg, seed=2)
    tgt_in = padded_batch([5, 8, 3], ours.cfg, seed=3, start_with_bos=True)
    with torch.no_grad():
        expected = ref(src, tgt_in)
        got = ours(src, tgt_in)
    assert got.shape == (3, 8, ours.cfg.vocab_size)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_parity_would_catch_a_changed_weight():
    """The comparison is sensitive: nudging one bias moves the logits far beyond tolerance."""
    ours = tiny_model(seed=1)
    ref = TorchReference(ours).eval()
    with torch.no_grad():
        ref.core.decoder.layers[0].linear1.bias.add_(0.01)
    src = padded_batch([6, 3], ours.cfg, seed=4)
    tgt_in = padded_batch([4, 5], ours.cfg, seed=5, start_with_bos=True)
    with torch.no_grad():
        assert (ours(src, tgt_in) - ref(src, tgt_in)).abs().max() > 1e-3
