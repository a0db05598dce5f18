"""DETR's set prediction loss, the paper's "Hungarian loss" (Carion et al., 2020, eq. 2): match,
then cross-entropy (no-object down-weighted), L1 and GIoU on boxes, summed over every decoder
layer (the auxiliary losses)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from aiayn.vision.boxes import cxcywh_to_xyxy, generalized_box_iou
from aiayn.vision.detr import Detections
from aiayn.vision.matcher import hungarian_match, match_cost


@dataclass(frozen=True)
class HungarianLossWeights:
    no_object: float = 0.1  # cross-entropy weight of the "no object" class
    class_: float = 1.0
    l1: float = 5.0
    giou: float = 2.0


def layer_hungarian_loss(
    logits: Tensor,
    boxes: Tensor,
    labels: list[Tensor],
    targets: list[Tensor],
    w: HungarianLossWeights,
) -> Tensor:
    """The loss of one decoder layer's predictions.

    Args:
        logits: (B, Q, classes + 1); boxes: (B, Q, 4) cxcywh.
        labels, targets: per image (M_i,) classes and (M_i, 4) cxcywh boxes.
    """
    B, Q, n_logits = logits.shape
    no_object = n_logits - 1
    classes = torch.full((B, Q), no_object, dtype=torch.long, device=logits.device)  # (B, Q)
    matched_boxes, matched_targets = [], []
    for i in range(B):
        cost = match_cost(logits[i], boxes[i], labels[i], targets[i], (w.class_, w.l1, w.giou))
        pred, obj = hungarian_match(cost)
        classes[i, pred] = labels[i][obj]
        matched_boxes.append(boxes[i, pred])
        matched_targets.append(targets[i][obj])
    class_weights = torch.ones(n_logits, device=logits.device)
    class_weights[no_object] = w.no_object
    ce = F.cross_entropy(logits.flatten(0, 1), classes.flatten(), class_weights)
    pred_boxes, true_boxes = torch.cat(matched_boxes), torch.cat(matched_targets)  # (ΣM, 4)
    n_boxes = max(len(true_boxes), 1)
    l1 = F.l1_loss(pred_boxes, true_boxes, reduction="sum") / n_boxes
    giou = generalized_box_iou(cxcywh_to_xyxy(pred_boxes), cxcywh_to_xyxy(true_boxes))
    giou_loss = (1 - giou.diagonal()).sum() / n_boxes
    return w.class_ * ce + w.l1 * l1 + w.giou * giou_loss


def hungarian_loss(
    out: Detections, labels: list[Tensor], targets: list[Tensor], w: HungarianLossWeights
) -> Tensor:
    """Every decoder layer's Hungarian loss, summed (the last layer's, plus the auxiliary ones)."""
    return sum(
        (
            layer_hungarian_loss(out.logits[j], out.boxes[j], labels, targets, w)
            for j in range(out.logits.shape[0])
        ),
        start=torch.zeros((), device=out.logits.device),
    )
