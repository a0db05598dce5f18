"""ViT: the same logits as Hugging Face's ViTForImageClassification with our weights copied in.

The issue asks for torchvision's VisionTransformer as the reference; torchvision cannot be used
here: PyPI's torchvision 0.28.0 (the build for torch 2.13.0) installs beside our CPU torch but
fails on import ("operator torchvision::nms does not exist": its compiled operators are built
against CUDA torch), and newer ones require a newer torch. Hugging Face's ViT, built from a
config with random weights (nothing downloaded), is the reference instead.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from aiayn.vision.build import build_vision_model
from aiayn.vision.config import VISION_PRESETS
from tests.vision.conftest import copy_attention, copy_ffn

transformers = pytest.importorskip("transformers")


def reference_vit(cfg):
    config = transformers.ViTConfig(
        hidden_size=cfg.d_model,
        num_hidden_layers=cfg.n_encoder_layers,
        num_attention_heads=cfg.n_heads,
        intermediate_size=cfg.d_ff,
        image_size=cfg.image_size,
        patch_size=cfg.patch_size,
        num_channels=cfg.in_channels,
        num_labels=cfg.num_classes,
        layer_norm_eps=cfg.norm_eps,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return transformers.ViTForImageClassification(config).eval()


def copy_vit(ours, ref) -> None:
    vit, enc = ref.vit, ours.encoder
    with torch.no_grad():
        vit.embeddings.cls_token.copy_(enc.class_token)
        vit.embeddings.position_embeddings.copy_(enc.pos_embed)
        vit.embeddings.patch_embeddings.projection.load_state_dict(
            enc.patch_embed.proj.state_dict()
        )
        for layer, theirs in zip(enc.layers, vit.layers, strict=True):
            a = theirs.attention
            copy_attention(layer.self_attn, a.q_proj, a.k_proj, a.v_proj, a.o_proj)
            copy_ffn(layer.ffn, theirs.mlp.fc1, theirs.mlp.fc2)
            theirs.layernorm_before.load_state_dict(layer.self_attn_residual.norm.state_dict())
            theirs.layernorm_after.load_state_dict(layer.ffn_residual.norm.state_dict())
        vit.layernorm.load_state_dict(enc.norm.state_dict())
        ref.classifier.load_state_dict(ours.head.state_dict())


@pytest.mark.parametrize("channels", [1, 3])
def test_vit_logits_match_hugging_face(channels):
    torch.manual_seed(0)
    cfg = dataclasses.replace(
        VISION_PRESETS["tiny-classify"], in_channels=channels, n_encoder_layers=2
    )
    ours = build_vision_model(cfg).eval()
    ref = reference_vit(cfg)
    copy_vit(ours, ref)
    images = torch.rand(3, channels, cfg.image_size, cfg.image_size)
    with torch.no_grad():
        expected = ref(pixel_values=images).logits
        got = ours(images)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_class_token_attention_is_a_share_of_the_patches():
    torch.manual_seed(0)
    cfg = VISION_PRESETS["tiny-classify"]
    model = build_vision_model(cfg).eval()
    with torch.no_grad():
        maps = model.class_token_attention(torch.rand(2, 1, 8, 8))
    assert maps.shape == (cfg.n_encoder_layers, 2, 4, 4)  # (layers, B, G, G)
    sums = maps.sum(dim=(-1, -2))
    assert (sums > 0).all() and (sums < 1).all()  # the rest goes to the class token itself


def test_sine_positions_build_and_differ_by_patch():
    cfg = dataclasses.replace(VISION_PRESETS["tiny-classify"], positions="sine")
    model = build_vision_model(cfg)
    pos = model.encoder.pos_embed[0]  # (1 + N, D)
    assert torch.equal(pos[0], torch.zeros_like(pos[0]))  # the class token has no position
    assert len({tuple(p.tolist()) for p in pos[1:]}) == pos.shape[0] - 1
    assert "encoder.pos_embed" not in model.state_dict()  # fixed: not a weight
