"""The Transformer beyond text: ViT, DETR and SETR built from aiayn's own encoder/decoder layers.

The front door:

    from aiayn.vision import build_vision_model, load_vision_model, save_vision_model, vision_preset

    cfg = vision_preset("tiny-detect")  # or VisionConfig(task="detect", ...); see VISION_PRESETS
    model = build_vision_model(cfg)  # ViT, DETR or SETR by task; fresh weights
    save_vision_model(model, cfg, directory)
    model, cfg = load_vision_model(directory)

Shape notation, beside the text model's (B batch, S source length, D d_model, H heads, Dh head
size): C channels or classes, Hp/Wp image height/width in pixels, G tokens per side of the
patch (or feature) grid, N = G*G image tokens, Q object queries, L decoder layers, M objects.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from aiayn.vision.config import VISION_PRESETS, VisionConfig, VisionTrainConfig, vision_preset

if TYPE_CHECKING:
    from aiayn.vision.build import build_vision_model, load_vision_model, save_vision_model
    from aiayn.vision.detr import DETR
    from aiayn.vision.setr import SETR
    from aiayn.vision.vit import ViT

# The models need torch, so they are imported on first use: the command line reads the presets
# above when it starts, and `aiayn --help` or `aiayn prepare` should not wait for torch.
_NEED_TORCH = {
    "aiayn.vision.build": ("build_vision_model", "load_vision_model", "save_vision_model"),
    "aiayn.vision.detr": ("DETR",),
    "aiayn.vision.setr": ("SETR",),
    "aiayn.vision.vit": ("ViT",),
}


def __getattr__(name: str) -> Any:
    for module, names in _NEED_TORCH.items():
        if name in names:
            return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'aiayn.vision' has no attribute {name!r}")


__all__ = [
    "DETR",
    "SETR",
    "VISION_PRESETS",
    "ViT",
    "VisionConfig",
    "VisionTrainConfig",
    "build_vision_model",
    "load_vision_model",
    "save_vision_model",
    "vision_preset",
]
