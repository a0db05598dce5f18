"""Scores: accuracy, COCO mean average precision (pycocotools), mean IoU (torchmetrics)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

import torch
from torch import Tensor


def accuracy(logits: Tensor, labels: Tensor) -> float:
    """Share of (B, classes) rows whose arg-max is the (B,) label."""
    return (logits.argmax(-1) == labels).float().mean().item()


@dataclass(frozen=True)
class ImageBoxes:
    """Boxes of one image in pixels, (x0, y0, x1, y1); scores only for predictions."""

    boxes: Tensor  # (M, 4)
    labels: Tensor  # (M,)
    scores: Tensor | None = None  # (M,)


@dataclass(frozen=True)
class ScoredBoxes(ImageBoxes):
    """A model's boxes of one image: each has a score."""

    scores: Tensor  # (M,)


def mean_average_precision(predictions: list[ScoredBoxes], truths: list[ImageBoxes]) -> dict:
    """COCO's detection metric, computed by pycocotools' own COCOeval.

    Returns:
        {"map": mAP@[.5:.95], "map_50": mAP@.5, "map_75": mAP@.75}
    """
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt = COCO()
    gt.dataset = {
        "images": [{"id": i} for i in range(len(truths))],
        "categories": [{"id": c} for c in range(1 + _max_label([*truths, *predictions]))],
        "annotations": [
            {
                "id": n + 1,
                "image_id": i,
                "category_id": int(c),
                "bbox": _xywh(b),
                "area": _area(b),
                "iscrowd": 0,
            }
            for n, (i, b, c) in enumerate(_flat(truths))
        ],
    }
    detections = [
        {"image_id": i, "category_id": int(c), "bbox": _xywh(b), "score": float(s)}
        for i, p in enumerate(predictions)
        for b, c, s in zip(p.boxes.tolist(), p.labels.tolist(), p.scores.tolist(), strict=True)
    ]
    if not detections or not gt.dataset["annotations"]:
        return {"map": 0.0, "map_50": 0.0, "map_75": 0.0}
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints its progress
        gt.createIndex()
        evaluation = COCOeval(gt, gt.loadRes(detections), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    stats = evaluation.stats
    return {"map": float(stats[0]), "map_50": float(stats[1]), "map_75": float(stats[2])}


def _flat(images: list[ImageBoxes]) -> list[tuple[int, list[float], int]]:
    return [
        (i, b, c)
        for i, image in enumerate(images)
        for b, c in zip(image.boxes.tolist(), image.labels.tolist(), strict=True)
    ]


def _max_label(images: list[ImageBoxes]) -> int:
    return max((int(im.labels.max()) for im in images if len(im.labels)), default=0)


def _xywh(box: list[float]) -> list[float]:
    return [box[0], box[1], box[2] - box[0], box[3] - box[1]]


def _area(box: list[float]) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


class MeanIoU:
    """Mean over classes of |prediction n truth| / |prediction u truth|, accumulated over
    batches (torchmetrics' multiclass Jaccard index, macro average)."""

    def __init__(self, n_classes: int) -> None:
        from torchmetrics.classification import MulticlassJaccardIndex

        self.metric = MulticlassJaccardIndex(n_classes, average="macro")

    def update(self, logits: Tensor, mask: Tensor) -> None:
        """(B, classes, Hp, Wp) scores and (B, Hp, Wp) true classes."""
        self.metric.update(logits.argmax(1), mask)

    def compute(self) -> float:
        return float(self.metric.compute())


@torch.no_grad()
def detections_to_boxes(logits: Tensor, boxes: Tensor, image_size: int) -> list[ScoredBoxes]:
    """The last decoder layer's (B, Q, classes + 1) logits and (B, Q, 4) boxes as scored boxes
    in pixels: every query, labelled with its best real class."""
    from aiayn.vision.boxes import cxcywh_to_xyxy

    scores, labels = logits.softmax(-1)[..., :-1].max(-1)  # (B, Q) each
    pixels = cxcywh_to_xyxy(boxes) * image_size  # (B, Q, 4)
    return [ScoredBoxes(pixels[i], labels[i], scores[i]) for i in range(len(pixels))]
