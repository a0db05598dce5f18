"""The weights returned for plots are softmax(Q K^T / sqrt(d_k)) with masking."""

import math

import torch

from aiayn.model.masks import causal_mask, padding_mask
from tests.conftest import padded_batch, tiny_model


def expected_weights(attention, x_q, x_kv, mask):
    """softmax(Q K^T / sqrt(d_k)) from the module's own W^Q, W^K, written out by hand."""
    D, H = attention.d_model, attention.n_heads
    w_q, w_k, _ = attention.w_qkv.weight.split(D)
    b_q, b_k, _ = attention.w_qkv.bias.split(D)
    q = (x_q @ w_q.t() + b_q).view(*x_q.shape[:2], H, -1).transpose(1, 2)  # (B, H, T, Dh)
    k = (x_kv @ w_k.t() + b_k).view(*x_kv.shape[:2], H, -1).transpose(1, 2)  # (B, H, S, Dh)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)  # (B, H, T, S)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def test_weights_per_layer_and_head():
    model = tiny_model(seed=41)  # post-norm: each layer's input is the previous layer's output
    cfg = model.cfg
    src = padded_batch([7, 4], cfg, seed=1)
    tgt_in = padded_batch([5, 6], cfg, seed=2, start_with_bos=True)
    with torch.no_grad():
        maps = model.attention_maps(src, tgt_in)
        x = model._embed(src, model.src_embed)
        src_mask = padding_mask(src, cfg.pad_id)
        for layer, got in zip(model.encoder_layers, maps.encoder, strict=True):
            assert got.shape == (2, cfg.n_heads, 7, 7)
            torch.testing.assert_close(got, expected_weights(layer.self_attn, x, x, src_mask))
            x, _ = layer(x, src_mask)
        memory = x

        y = model._embed(tgt_in, model.src_embed)
        for i, layer in enumerate(model.decoder_layers):
            self_w, cross_w = maps.decoder_self[i], maps.cross[i]
            assert self_w.shape == (2, cfg.n_heads, 6, 6)
            assert cross_w.shape == (2, cfg.n_heads, 6, 7)
            torch.testing.assert_close(
                self_w, expected_weights(layer.self_attn, y, y, causal_mask(6, 0))
            )
            z = layer.self_attn_residual.exit(
                y, layer.self_attn.attend(*layer.self_attn.project_qkv(y), is_causal=True)[0]
            )
            torch.testing.assert_close(
                cross_w, expected_weights(layer.cross_attn, z, memory, src_mask)
            )
            k, v = layer.cross_attn.project_kv(memory)
            y = layer(y, k, v, src_mask).x


def test_masked_positions_get_zero_weight_and_rows_sum_to_one():
    model = tiny_model(seed=42)
    src = padded_batch([3, 8], model.cfg, seed=3)
    tgt_in = padded_batch([6, 6], model.cfg, seed=4, start_with_bos=True)
    with torch.no_grad():
        maps = model.attention_maps(src, tgt_in)
    for w in (*maps.encoder, *maps.decoder_self, *maps.cross):
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    for w in (*maps.encoder, *maps.cross):
        assert torch.all(w[0, :, :, 3:] == 0)  # the first sentence's source padding
    for w in maps.decoder_self:
        assert torch.all(w.triu(diagonal=1) == 0)  # the future


def test_weights_path_computes_the_same_outputs_as_the_fused_kernel(norm_first):
    model = tiny_model(seed=43, norm_first=norm_first)
    src = padded_batch([5, 9], model.cfg, seed=5)
    tgt_in = padded_batch([7, 3], model.cfg, seed=6, start_with_bos=True)
    with torch.no_grad():
        encoded = model.encode(src, need_weights=True)
        decoded = model.decode_with_weights(tgt_in, encoded)
        torch.testing.assert_close(decoded.logits, model(src, tgt_in), rtol=0, atol=1e-5)
