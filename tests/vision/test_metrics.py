"""Metrics: COCO mAP by pycocotools and mean IoU by torchmetrics, on hand-made cases."""

from __future__ import annotations

import pytest
import torch

from aiayn.vision.metrics import ImageBoxes, MeanIoU, ScoredBoxes, mean_average_precision


def test_map_is_one_for_exact_boxes_and_drops_for_a_wrong_class():
    truth = [ImageBoxes(torch.tensor([[2.0, 2, 12, 14], [16, 4, 28, 20]]), torch.tensor([3, 7]))]
    exact = [ScoredBoxes(truth[0].boxes, truth[0].labels, torch.tensor([0.9, 0.8]))]
    assert mean_average_precision(exact, truth)["map_50"] == pytest.approx(1.0)
    wrong = [ScoredBoxes(truth[0].boxes, torch.tensor([3, 5]), torch.tensor([0.9, 0.8]))]
    assert mean_average_precision(wrong, truth)["map_50"] < 0.6
    moved = [ScoredBoxes(truth[0].boxes + 6, truth[0].labels, torch.tensor([0.9, 0.8]))]
    assert mean_average_precision(moved, truth)["map_50"] < 0.1


def test_mean_iou_of_hand_made_masks():
    mask = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])  # (1, 2, 4)
    logits = torch.nn.functional.one_hot(mask, 2).permute(0, 3, 1, 2).float()  # (1, 2, 2, 4)
    metric = MeanIoU(2)
    metric.update(logits, mask)
    assert metric.compute() == pytest.approx(1.0)
    half = MeanIoU(2)
    half.update(logits, torch.zeros_like(mask))  # truth all background: IoU 0.5 and 0
    assert half.compute() == pytest.approx(0.25)
