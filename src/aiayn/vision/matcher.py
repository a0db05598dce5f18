"""DETR's bipartite matching: each ground-truth object gets the one prediction that costs least,
all at once, by the Hungarian algorithm (scipy's `linear_sum_assignment`)."""

from __future__ import annotations

import torch
from scipy.optimize import linear_sum_assignment
from torch import Tensor

from aiayn.vision.boxes import cxcywh_to_xyxy, generalized_box_iou


def match_cost(
    logits: Tensor, boxes: Tensor, labels: Tensor, target_boxes: Tensor, weights: tuple
) -> Tensor:
    """DETR's matching cost of every (prediction, object) pair of one image.

    Args:
        logits: (Q, classes + 1); boxes: (Q, 4) cxcywh.
        labels: (M,) classes; target_boxes: (M, 4) cxcywh.
        weights: (class, L1, GIoU) weights.

    Returns:
        (Q, M) cost: -w_c p(class) + w_l1 |b - b'|_1 - w_giou GIoU(b, b').
    """
    w_class, w_l1, w_giou = weights
    prob = logits.softmax(-1)[:, labels]  # (Q, M)
    l1 = torch.cdist(boxes, target_boxes, p=1)  # (Q, M)
    giou = generalized_box_iou(cxcywh_to_xyxy(boxes), cxcywh_to_xyxy(target_boxes))  # (Q, M)
    return -w_class * prob + w_l1 * l1 - w_giou * giou


def hungarian_match(cost: Tensor) -> tuple[Tensor, Tensor]:
    """The assignment of least total cost: (prediction indices, object indices), each (M,),
    objects in increasing order."""
    rows, cols = linear_sum_assignment(cost.detach().cpu().float().numpy())
    order = cols.argsort()
    return torch.as_tensor(rows[order]), torch.as_tensor(cols[order])
