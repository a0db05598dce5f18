"""Scoring a model on a split: accuracy (classify), COCO mAP (detect), mean IoU (segment)."""

from __future__ import annotations

import torch
from torch import nn

from aiayn.vision.batches import digit_batches, scene_batches
from aiayn.vision.boxes import cxcywh_to_xyxy
from aiayn.vision.config import VisionConfig
from aiayn.vision.metrics import (
    ImageBoxes,
    MeanIoU,
    accuracy,
    detections_to_boxes,
    mean_average_precision,
)


@torch.no_grad()
def evaluate_images(model: nn.Module, cfg: VisionConfig, split: str, count: int = 500) -> dict:
    """The task's metric on `split` (digits: all of them; scenes: the first `count`)."""
    was_training = model.training
    model.eval()
    try:
        if cfg.task == "classify":
            right, total = 0.0, 0
            for d in digit_batches(split):
                right += accuracy(model(d.images), d.labels) * len(d.labels)
                total += len(d.labels)
            return {"accuracy": right / total, "images": total}
        batches = scene_batches(split, count, cfg.image_size)
        if cfg.task == "segment":
            miou, n = MeanIoU(cfg.num_classes + 1), 0
            for b in batches:
                miou.update(model(b.images), b.masks)
                n += len(b.images)
            return {"mean_iou": miou.compute(), "images": n}
        predictions, truths = [], []
        for b in batches:
            out = model(b.images)
            predictions += detections_to_boxes(out.logits[-1], out.boxes[-1], cfg.image_size)
            truths += [
                ImageBoxes(cxcywh_to_xyxy(s.boxes) * cfg.image_size, s.labels) for s in b.scenes
            ]
        return {**mean_average_precision(predictions, truths), "images": len(truths)}
    finally:
        model.train(was_training)
