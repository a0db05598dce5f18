"""What a person looks at: predictions drawn on held-out scenes, and one image's prediction."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor, nn

from aiayn.plot import save
from aiayn.vision.boxes import cxcywh_to_xyxy
from aiayn.vision.config import VisionConfig
from aiayn.vision.data import digits, eval_seeds, make_scenes
from aiayn.vision.draw import class_token_attention_figure, detections_figure, segmentation_figure
from aiayn.vision.metrics import ImageBoxes, detections_to_boxes
from aiayn.vision.vit import ViT


@torch.no_grad()
def draw_examples(
    model: nn.Module, cfg: VisionConfig, split: str, path: Path, count: int = 6
) -> Path:
    """The first `count` images of a split with the model's predictions (and the truth)."""
    model.eval()
    if cfg.task == "classify":
        assert isinstance(model, ViT)  # for the type checker: build_vision_model's classifier
        images, labels = digits(split)
        images = images[:count, None]  # (B, 1, 8, 8)
        guesses = model(images).argmax(-1).tolist()
        names = [
            f"true {t}, said {g}" for t, g in zip(labels[:count].tolist(), guesses, strict=True)
        ]
        return save(
            class_token_attention_figure(images, model.class_token_attention(images), names), path
        )
    scenes = make_scenes(split, list(eval_seeds(count)), cfg.image_size)
    images = torch.stack([s.image for s in scenes])  # (B, 1, Hp, Wp)
    if cfg.task == "segment":
        predicted = list(model(images).argmax(1))  # B x (Hp, Wp)
        return save(segmentation_figure(list(images), predicted, [s.mask for s in scenes]), path)
    out = model(images)
    found = detections_to_boxes(out.logits[-1], out.boxes[-1], cfg.image_size)
    truths = [ImageBoxes(cxcywh_to_xyxy(s.boxes) * cfg.image_size, s.labels) for s in scenes]
    return save(detections_figure(list(images), found, truths), path)


@torch.no_grad()
def predict_image(
    model: nn.Module, cfg: VisionConfig, image: Tensor, out: Path, threshold: float = 0.5
) -> dict:
    """One (1, Hp, Wp) image: its class (classify; nothing drawn), or its boxes or mask drawn
    into `out`. Returns what was found."""
    model.eval()
    batch = image[None]  # (1, 1, Hp, Wp)
    if cfg.task == "classify":
        probs = model(batch).softmax(-1)[0]  # (classes,)
        return {"class": int(probs.argmax()), "probability": round(float(probs.max()), 4)}
    if cfg.task == "segment":
        mask = model(batch).argmax(1)[0]  # (Hp, Wp)
        save(segmentation_figure([image], [mask]), out)
        present = sorted(int(c) - 1 for c in mask.unique() if c > 0)
        return {"out": str(out), "digits_present": present}
    detections = model(batch)
    found = detections_to_boxes(detections.logits[-1], detections.boxes[-1], cfg.image_size)[0]
    save(detections_figure([image], [found], threshold=threshold), out)
    keep = found.scores >= threshold
    return {
        "out": str(out),
        "objects": [
            {"class": int(c), "score": round(float(s), 4), "box": [round(v, 1) for v in b]}
            for c, s, b in zip(
                found.labels[keep].tolist(),
                found.scores[keep].tolist(),
                found.boxes[keep].tolist(),
                strict=True,
            )
        ],
    }
