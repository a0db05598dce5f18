"""Box arithmetic: formats, IoU and generalized IoU (Rezatofighi et al., 2019).

torchvision.ops would be the field's home for these, but its PyPI wheels do not load beside the
CPU torch this project installs; the tests check these against Hugging Face's copies.
"""

from __future__ import annotations

import torch
from torch import Tensor


def cxcywh_to_xyxy(boxes: Tensor) -> Tensor:
    """(..., 4) centre, width, height -> (..., 4) corners x0, y0, x1, y1."""
    cx, cy, w, h = boxes.unbind(-1)
    return torch.stack((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), dim=-1)


def box_area(boxes: Tensor) -> Tensor:
    """(..., 4) xyxy -> (...,)."""
    return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])


def box_iou(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Pairwise IoU and union of (n, 4) and (m, 4) xyxy boxes: two (n, m)."""
    top_left = torch.max(a[:, None, :2], b[None, :, :2])  # (n, m, 2)
    bottom_right = torch.min(a[:, None, 2:], b[None, :, 2:])  # (n, m, 2)
    overlap = (bottom_right - top_left).clamp(min=0).prod(dim=-1)  # (n, m)
    union = box_area(a)[:, None] + box_area(b)[None, :] - overlap  # (n, m)
    return overlap / union, union


def generalized_box_iou(a: Tensor, b: Tensor) -> Tensor:
    """GIoU = IoU - |C - (A u B)| / |C|, C the smallest box enclosing both: (n, m)."""
    iou, union = box_iou(a, b)
    top_left = torch.min(a[:, None, :2], b[None, :, :2])  # (n, m, 2)
    bottom_right = torch.max(a[:, None, 2:], b[None, :, 2:])  # (n, m, 2)
    enclosing = (bottom_right - top_left).clamp(min=0).prod(dim=-1)  # (n, m)
    return iou - (enclosing - union) / enclosing
