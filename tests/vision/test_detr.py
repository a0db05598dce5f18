"""DETR: its transformer part against Hugging Face's DetrEncoder/DetrDecoder with our weights
copied in, its 2-D sine positions against Hugging Face's, and the text path left unchanged.

The backbone is not compared: torchvision's ResNet (the issue's suggestion) does not load beside
our CPU torch (see test_vit.py), and Hugging Face's DetrModel wraps a backbone of its own; the
issue's "transformer part" is the encoder-decoder with its positions, which is compared whole.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from aiayn.model.layers import DecoderLayer, EncoderLayer
from aiayn.vision.build import build_vision_model, layer_spec
from aiayn.vision.config import VISION_PRESETS
from aiayn.vision.positional import sine_positions_2d
from tests.vision.conftest import copy_attention, copy_ffn

detr = pytest.importorskip("transformers.models.detr.modeling_detr")


def reference_parts(cfg):
    config = detr.DetrConfig(
        use_timm_backbone=False,
        use_pretrained_backbone=False,
        d_model=cfg.d_model,
        encoder_layers=cfg.n_encoder_layers,
        decoder_layers=cfg.n_decoder_layers,
        encoder_attention_heads=cfg.n_heads,
        decoder_attention_heads=cfg.n_heads,
        encoder_ffn_dim=cfg.d_ff,
        decoder_ffn_dim=cfg.d_ff,
        num_queries=cfg.n_queries,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        auxiliary_loss=False,
    )
    return detr.DetrEncoder(config).eval(), detr.DetrDecoder(config).eval()


def copy_detr(ours, encoder, decoder) -> None:
    with torch.no_grad():
        for layer, theirs in zip(ours.encoder_layers, encoder.layers, strict=True):
            a = theirs.self_attn
            copy_attention(layer.self_attn, a.q_proj, a.k_proj, a.v_proj, a.o_proj)
            copy_ffn(layer.ffn, theirs.mlp.fc1, theirs.mlp.fc2)
            theirs.self_attn_layer_norm.load_state_dict(layer.self_attn_residual.norm.state_dict())
            theirs.final_layer_norm.load_state_dict(layer.ffn_residual.norm.state_dict())
        for layer, theirs in zip(ours.decoder_layers, decoder.layers, strict=True):
            a, c = theirs.self_attn, theirs.encoder_attn
            copy_attention(layer.self_attn, a.q_proj, a.k_proj, a.v_proj, a.o_proj)
            copy_attention(layer.cross_attn, c.q_proj, c.k_proj, c.v_proj, c.o_proj)
            copy_ffn(layer.ffn, theirs.mlp.fc1, theirs.mlp.fc2)
            theirs.self_attn_layer_norm.load_state_dict(layer.self_attn_residual.norm.state_dict())
            theirs.encoder_attn_layer_norm.load_state_dict(
                layer.cross_attn_residual.norm.state_dict()
            )
            theirs.final_layer_norm.load_state_dict(layer.ffn_residual.norm.state_dict())
        decoder.layernorm.load_state_dict(ours.decoder_norm.state_dict())


def test_detr_transformer_matches_hugging_face():
    torch.manual_seed(0)
    cfg = dataclasses.replace(VISION_PRESETS["tiny-detect"], n_encoder_layers=2)
    ours = build_vision_model(cfg).eval()
    encoder, decoder = reference_parts(cfg)
    copy_detr(ours, encoder, decoder)
    B, S, D = 2, cfg.grid**2, cfg.d_model
    src = torch.randn(B, S, D)
    pos = ours.pos.expand(B, -1, -1)  # (B, S, D)
    query_pos = ours.query_pos.expand(B, -1, -1)  # (B, Q, D)
    with torch.no_grad():
        memory = encoder(inputs_embeds=src, spatial_position_embeddings=pos).last_hidden_state
        expected = decoder(
            inputs_embeds=torch.zeros_like(query_pos),
            encoder_hidden_states=memory,
            spatial_position_embeddings=pos,
            object_queries_position_embeddings=query_pos,
        ).last_hidden_state
        got = ours.transformer(src, ours.pos, ours.query_pos)  # (L, B, Q, D)
    assert got.shape == (cfg.n_decoder_layers, B, cfg.n_queries, D)
    torch.testing.assert_close(got[-1], expected, atol=1e-5, rtol=1e-5)


def test_sine_positions_match_hugging_face():
    height, width, D = 4, 6, 16
    reference = detr.DetrSinePositionEmbedding(num_position_features=D // 2, normalize=True)
    expected = reference((1, D, height, width), "cpu", torch.float32)  # (1, D, Hg, Wg)
    expected = expected.flatten(2).transpose(1, 2)[0]  # (Hg*Wg, D)
    torch.testing.assert_close(sine_positions_2d(height, width, D), expected, atol=1e-5, rtol=0)


def test_zero_positions_change_nothing_in_our_layers():
    """The positions DETR adds are a term of their own: zero positions give the plain layers."""
    torch.manual_seed(0)
    spec = layer_spec(VISION_PRESETS["tiny-detect"])
    enc, dec = EncoderLayer(spec).eval(), DecoderLayer(spec).eval()
    x, memory = torch.randn(2, 5, spec.d_model), torch.randn(2, 7, spec.d_model)
    zeros = torch.zeros(1, 5, spec.d_model)
    torch.testing.assert_close(enc(x, None, pos=zeros)[0], enc(x, None)[0], atol=0, rtol=0)
    k, v = dec.cross_attn.project_kv(memory)
    plain = dec(x, k, v, None, is_causal=False).x
    torch.testing.assert_close(dec(x, k, v, None, is_causal=False, query_pos=zeros).x, plain)
    moved = dec(x, k, v, None, is_causal=False, query_pos=torch.randn(1, 5, spec.d_model)).x
    assert not torch.allclose(moved, plain)


def test_detr_predicts_a_box_and_class_per_query_at_every_layer():
    torch.manual_seed(0)
    cfg = VISION_PRESETS["tiny-detect"]
    out = build_vision_model(cfg).eval()(torch.rand(3, 1, cfg.image_size, cfg.image_size))
    assert out.logits.shape == (cfg.n_decoder_layers, 3, cfg.n_queries, cfg.num_classes + 1)
    assert out.boxes.shape == (cfg.n_decoder_layers, 3, cfg.n_queries, 4)
    assert ((out.boxes > 0) & (out.boxes < 1)).all()
