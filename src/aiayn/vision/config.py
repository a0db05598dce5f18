"""Vision configuration: one frozen dataclass for the model, one for training, named presets.

`VisionConfig`'s defaults are ViT-B/16's (Dosovitskiy et al., 2021, Table 1); DETR's own choices
(post-norm, ReLU, 100 queries) are in its presets. The digit presets are sized for a CPU.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from aiayn.config import ACTIVATIONS, FrozenConfig

TASKS = ("classify", "detect", "segment")
POSITIONS = ("learned", "sine")


@dataclass(frozen=True)
class VisionConfig(FrozenConfig):
    """The model of one task: ViT (classify), DETR (detect) or SETR (segment)."""

    task: str = "classify"  # classify (ViT) | detect (DETR) | segment (SETR)
    image_size: int = 224  # side of the square input image, in pixels
    in_channels: int = 3  # colour channels of the input
    num_classes: int = 1000  # classes; DETR adds one "no object", SETR's class 0 is background
    patch_size: int = 16  # P: ViT/SETR cut the image into P x P patches (the "16x16 words")
    d_model: int = 768  # width of every token
    d_ff: int = 3072  # inner size of the feed-forward net
    n_heads: int = 12  # attention heads
    n_encoder_layers: int = 12  # encoder depth
    n_decoder_layers: int = 0  # DETR's decoder depth (0 for ViT and SETR)
    dropout: float = 0.1  # on token sums and sub-layer outputs
    norm_first: bool = True  # pre-norm, as ViT; DETR is post-norm like the Transformer paper
    norm_eps: float = 1e-6  # LayerNorm epsilon
    activation: str = "gelu"  # feed-forward non-linearity: gelu (ViT), relu (DETR)
    positions: str = "learned"  # ViT/SETR: learned, or 2-D sine (DETR always uses 2-D sine)
    n_queries: int = 100  # DETR's object queries: the most objects one image can hold
    backbone_channels: int = 64  # DETR: width of the small ResNet's first stage
    backbone_stride: int = 4  # DETR: the feature map is the image downsampled this much

    def __post_init__(self) -> None:
        problems = []
        if self.task not in TASKS:
            problems.append(f"task={self.task!r}; choose one of {TASKS}")
        if self.d_model % self.n_heads:
            problems.append(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.task != "detect" and self.image_size % self.patch_size:
            problems.append(f"image_size={self.image_size} is not a multiple of patch_size")
        if self.task == "detect" and (self.n_decoder_layers < 1 or self.d_model % 4):
            problems.append("DETR needs n_decoder_layers >= 1 and d_model divisible by 4")
        if self.task == "segment" and self.patch_size & (self.patch_size - 1):
            problems.append(f"SETR upsamples by 2s: patch_size={self.patch_size} not a power of 2")
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation={self.activation!r}; choose one of {ACTIVATIONS}")
        if self.positions not in POSITIONS:
            problems.append(f"positions={self.positions!r}; choose one of {POSITIONS}")
        if self.backbone_stride not in (1, 2, 4, 8):
            problems.append(f"backbone_stride={self.backbone_stride}; choose 1, 2, 4 or 8")
        if problems:
            raise ValueError("Invalid VisionConfig: " + "; ".join(problems))

    @property
    def grid(self) -> int:
        """Tokens per side: image_size / patch size (ViT, SETR) or / backbone stride (DETR)."""
        step = self.backbone_stride if self.task == "detect" else self.patch_size
        return self.image_size // step


@dataclass(frozen=True)
class VisionTrainConfig(FrozenConfig):
    """The training recipe: AdamW with linear warmup and cosine decay (ViT's and DETR's choice)."""

    batch_size: int = 64  # images per step
    lr: float = 1e-3  # peak learning rate
    weight_decay: float = 0.05  # AdamW's decoupled weight decay
    warmup: int = 200  # steps of linear warmup
    max_steps: int = 3000  # the run's length; the cosine reaches 0 here
    max_minutes: float = 0.0  # wall-clock budget of one invocation; 0 = no limit
    clip_norm: float = 1.0  # gradient-norm clipping (DETR: 0.1 on its scale); 0 = off
    augment: bool = True  # classify: random 1-pixel shifts of the training digits
    no_object_weight: float = 0.1  # DETR: cross-entropy weight of the "no object" class
    class_weight: float = 1.0  # DETR: weight of classification in the matching cost and loss
    l1_weight: float = 5.0  # DETR: weight of the L1 box distance
    giou_weight: float = 2.0  # DETR: weight of the generalized-IoU loss
    eval_every: int = 500  # steps between validations; 0 = only at the end
    save_every: int = 500  # steps between checkpoints
    keep_last: int = 2  # step checkpoints kept
    log_every: int = 50  # steps between lines in metrics.jsonl
    valid_size: int = 256  # validation images (scenes) scored at each validation
    seed: int = 1  # weights, dropout, batches

    def __post_init__(self) -> None:
        for name in ("batch_size", "max_steps", "keep_last", "log_every", "valid_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"Invalid VisionTrainConfig: {name} must be at least 1")


# The digit models, sized for a CPU: ViT on 8x8 digits (2x2 patches: 16 words), DETR (post-norm,
# ReLU, at most 8 objects) and SETR (4x4 patches) on 32x32 scenes.
_CLASSIFY = VisionConfig(
    image_size=8,
    patch_size=2,
    in_channels=1,
    num_classes=10,
    d_model=64,
    d_ff=128,
    n_heads=4,
    n_encoder_layers=4,
    dropout=0.0,
)
_DETECT = dataclasses.replace(
    _CLASSIFY,
    task="detect",
    image_size=32,
    norm_first=False,
    activation="relu",
    norm_eps=1e-5,
    n_queries=8,
    n_encoder_layers=2,
    n_decoder_layers=3,
    backbone_channels=16,
)
_SEGMENT = dataclasses.replace(_CLASSIFY, task="segment", image_size=32, patch_size=4)
_TINY: dict[str, Any] = dict(d_model=16, d_ff=32, n_heads=2, n_encoder_layers=1)

VISION_PRESETS: dict[str, VisionConfig] = {
    "vit-b16": VisionConfig(),
    "classify": _CLASSIFY,
    "detect": _DETECT,
    "segment": _SEGMENT,
    "tiny-classify": dataclasses.replace(_CLASSIFY, **_TINY),
    "tiny-detect": dataclasses.replace(_DETECT, **_TINY, n_decoder_layers=2, backbone_channels=8),
    "tiny-segment": dataclasses.replace(_SEGMENT, **_TINY, patch_size=8),
}


def vision_preset(name: str) -> VisionConfig:
    if name not in VISION_PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(VISION_PRESETS)}")
    return VISION_PRESETS[name]
