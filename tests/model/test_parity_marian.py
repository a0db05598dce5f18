"""Parity with Hugging Face MarianMTModel (random weights; nothing is downloaded).

Marian is post-norm with the concatenated sin|cos layout and embeddings scaled by sqrt(d_model):
with `positional="concatenated"` and the same activation our model computes the same function.
"""

import pytest
import torch
from transformers import MarianConfig, MarianMTModel

from aiayn import Transformer
from tests.conftest import copy_linear, padded_batch, perturb_vectors, tiny_model

HF_ACTIVATION = {"relu": "relu", "gelu": "gelu", "swish": "swish"}


def marian_like(ours: Transformer) -> MarianMTModel:
    cfg = ours.cfg
    config = MarianConfig(
        vocab_size=cfg.vocab_size,
        d_model=cfg.d_model,
        encoder_layers=cfg.n_encoder_layers,
        decoder_layers=cfg.n_decoder_layers,
        encoder_attention_heads=cfg.n_heads,
        decoder_attention_heads=cfg.n_heads,
        encoder_ffn_dim=cfg.d_ff,
        decoder_ffn_dim=cfg.d_ff,
        activation_function=HF_ACTIVATION[cfg.activation],
        max_position_embeddings=256,
        scale_embedding=True,
        pad_token_id=cfg.pad_id,
        eos_token_id=cfg.eos_id,
        decoder_start_token_id=cfg.bos_id,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    config._attn_implementation = "eager"  # plain softmax attention, independent of SDPA
    marian = MarianMTModel(config).eval()
    copy_weights(ours, marian)
    return marian


def copy_attention(dst, src) -> None:
    w_q, w_k, w_v = src.w_qkv.weight.chunk(3)
    b_q, b_k, b_v = src.w_qkv.bias.chunk(3)
    for proj, w, b in ((dst.q_proj, w_q, b_q), (dst.k_proj, w_k, b_k), (dst.v_proj, w_v, b_v)):
        proj.weight.copy_(w)
        proj.bias.copy_(b)
    copy_linear(dst.out_proj, src.w_o)


@torch.no_grad()
def copy_weights(ours: Transformer, marian: MarianMTModel) -> None:
    marian.model.shared.weight.copy_(ours.src_embed.weight)
    for theirs, mine in zip(marian.model.encoder.layers, ours.encoder_layers, strict=True):
        copy_attention(theirs.self_attn, mine.self_attn)
        copy_linear(theirs.self_attn_layer_norm, mine.self_attn_residual.norm)
        copy_linear(theirs.fc1, mine.ffn.w_1)
        copy_linear(theirs.fc2, mine.ffn.w_2)
        copy_linear(theirs.final_layer_norm, mine.ffn_residual.norm)
    for theirs, mine in zip(marian.model.decoder.layers, ours.decoder_layers, strict=True):
        copy_attention(theirs.self_attn, mine.self_attn)
        copy_linear(theirs.self_attn_layer_norm, mine.self_attn_residual.norm)
        copy_attention(theirs.encoder_attn, mine.cross_attn)
        copy_linear(theirs.encoder_attn_layer_norm, mine.cross_attn_residual.norm)
        copy_linear(theirs.fc1, mine.ffn.w_1)
        copy_linear(theirs.fc2, mine.ffn.w_2)
        copy_linear(theirs.final_layer_norm, mine.ffn_residual.norm)
    assert marian.lm_head.weight.data_ptr() == marian.model.shared.weight.data_ptr()
    marian.final_logits_bias.zero_()


@pytest.mark.parametrize("activation", ["relu", "gelu", "swish"])
def test_logits_equal_marian(activation):
    ours = tiny_model(seed=3, positional="concatenated", activation=activation)
    perturb_vectors(ours)
    marian = marian_like(ours)
    src = padded_batch([9, 5, 2, 7], ours.cfg, seed=6)
    tgt_in = padded_batch([6, 2, 9, 4], ours.cfg, seed=7, start_with_bos=True)
    with torch.no_grad():
        expected = marian(
            input_ids=src, attention_mask=(src != ours.cfg.pad_id).long(), decoder_input_ids=tgt_in
        ).logits
        got = ours(src, tgt_in)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-4)


def test_the_papers_interleaved_layout_is_not_marians():
    """The layouts differ (PAPER.md): the default model must not match Marian by accident."""
    ours = tiny_model(seed=3)
    marian = marian_like(ours)
    src = padded_batch([5, 3], ours.cfg, seed=8)
    tgt_in = padded_batch([4, 4], ours.cfg, seed=9, start_with_bos=True)
    with torch.no_grad():
        diff = (ours(src, tgt_in) - marian(input_ids=src, decoder_input_ids=tgt_in).logits).abs()
    assert diff.max() > 1e-2
