"""The one builder that reads a `VisionConfig`, and saving/loading a vision model directory."""

from __future__ import annotations

import json
from pathlib import Path

from safetensors.torch import load_file, save_file
from torch import nn

from aiayn.files import atomic_write, read_json
from aiayn.layout import CONFIG_FILE, WEIGHTS_FILE
from aiayn.model.layers import LayerSpec
from aiayn.vision.config import VisionConfig
from aiayn.vision.detr import DETR
from aiayn.vision.setr import SETR
from aiayn.vision.vit import ViT, ViTEncoder


def layer_spec(cfg: VisionConfig) -> LayerSpec:
    return LayerSpec(
        d_model=cfg.d_model,
        d_ff=cfg.d_ff,
        n_heads=cfg.n_heads,
        dropout=cfg.dropout,
        attention_dropout=0.0,
        norm_first=cfg.norm_first,
        norm_eps=cfg.norm_eps,
        activation=cfg.activation,
    )


def build_vision_model(cfg: VisionConfig) -> nn.Module:
    """ViT for `classify`, DETR for `detect`, SETR for `segment`, with fresh weights."""
    spec = layer_spec(cfg)
    if cfg.task == "detect":
        return DETR(
            spec,
            cfg.n_encoder_layers,
            cfg.n_decoder_layers,
            cfg.image_size,
            cfg.in_channels,
            cfg.num_classes,
            cfg.n_queries,
            cfg.backbone_channels,
            cfg.backbone_stride,
        )
    encoder = ViTEncoder(
        spec,
        cfg.n_encoder_layers,
        cfg.image_size,
        cfg.patch_size,
        cfg.in_channels,
        class_token=cfg.task == "classify",
        positions=cfg.positions,
    )
    if cfg.task == "classify":
        return ViT(encoder, cfg.num_classes)
    return SETR(encoder, cfg.num_classes + 1, cfg.patch_size)  # + background


def save_vision_model(model: nn.Module, cfg: VisionConfig, directory: Path) -> None:
    """config.json and model.safetensors (buffers such as batch-norm statistics included)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(cfg.to_dict(), indent=2) + "\n"
    atomic_write(directory / CONFIG_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    atomic_write(directory / WEIGHTS_FILE, lambda tmp: save_file(state, str(tmp)))


def load_vision_model(directory: Path) -> tuple[nn.Module, VisionConfig]:
    """A model saved by `save_vision_model`, in eval mode."""
    path = Path(directory) / CONFIG_FILE
    values = read_json(path, "point to a vision run, checkpoint or model")
    cfg = VisionConfig.from_dict(values, str(path))
    model = build_vision_model(cfg)
    model.load_state_dict(load_file(str(Path(directory) / WEIGHTS_FILE)))
    return model.eval(), cfg
