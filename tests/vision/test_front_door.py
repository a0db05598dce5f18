"""`from aiayn.vision import ...`: each task's tiny model built, run and saved through the front
door alone, and the front door costs the command line no torch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import aiayn.vision
from aiayn.vision import (
    DETR,
    SETR,
    VISION_PRESETS,
    VisionConfig,
    VisionTrainConfig,
    ViT,
    build_vision_model,
    load_vision_model,
    save_vision_model,
    vision_preset,
)
from aiayn.vision.detr import Detections


def outputs(model: torch.nn.Module, images: torch.Tensor) -> list[torch.Tensor]:
    """A model's output as tensors: DETR's per-layer logits and boxes, or the one tensor."""
    with torch.no_grad():
        out = model(images)
    return [out.logits, out.boxes] if isinstance(out, Detections) else [out]


@pytest.mark.parametrize(
    ("preset", "kind", "shapes"),
    [
        ("tiny-classify", ViT, [(2, 10)]),  # (B, classes)
        ("tiny-detect", DETR, [(2, 2, 8, 11), (2, 2, 8, 4)]),  # (L, B, Q, classes + 1), boxes
        ("tiny-segment", SETR, [(2, 11, 32, 32)]),  # (B, classes + background, Hp, Wp)
    ],
)
def test_each_task_builds_runs_and_round_trips(tmp_path, preset, kind, shapes):
    torch.manual_seed(0)
    cfg = vision_preset(preset)
    assert cfg is VISION_PRESETS[preset] and isinstance(cfg, VisionConfig)
    model = build_vision_model(cfg).eval()
    assert isinstance(model, kind)
    images = torch.rand(2, cfg.in_channels, cfg.image_size, cfg.image_size)  # (B, C, Hp, Wp)
    before = outputs(model, images)
    assert [tuple(t.shape) for t in before] == shapes

    save_vision_model(model, cfg, tmp_path / "model")
    loaded, loaded_cfg = load_vision_model(tmp_path / "model")
    assert loaded_cfg == cfg and not loaded.training
    for old, new in zip(before, outputs(loaded, images), strict=True):
        assert torch.equal(old, new)


def test_every_name_the_front_door_lists_opens():
    assert VisionTrainConfig().batch_size >= 1
    for name in aiayn.vision.__all__:
        assert getattr(aiayn.vision, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'Transformer'"):
        aiayn.vision.Transformer  # noqa: B018 - the text model is aiayn's, not vision's


def test_the_vision_command_starts_without_torch():
    """`aiayn --help` and `aiayn prepare` load the vision command (its presets), not torch."""
    code = "import sys, aiayn.commands.vision; print('torch' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(aiayn.vision.__file__).parents[2])}  # this src/
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert run.stdout.strip() == "False"
