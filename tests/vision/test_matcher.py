"""Hungarian matching against brute force; the Hungarian loss ignores the order of the objects."""

from __future__ import annotations

import itertools

import pytest
import torch

from aiayn.vision.boxes import cxcywh_to_xyxy, generalized_box_iou
from aiayn.vision.detr import Detections
from aiayn.vision.losses import HungarianLossWeights, hungarian_loss
from aiayn.vision.matcher import hungarian_match


def brute_force(cost: torch.Tensor) -> float:
    """The least total cost over every injective map of objects (columns) to predictions."""
    Q, M = cost.shape
    return min(
        sum(cost[rows[j], j].item() for j in range(M))
        for rows in itertools.permutations(range(Q), M)
    )


@pytest.mark.parametrize("shape", [(3, 3), (5, 2), (6, 4), (4, 1)])
def test_hungarian_finds_the_least_cost_assignment(shape):
    g = torch.Generator().manual_seed(sum(shape))
    for _ in range(10):
        cost = torch.rand(shape, generator=g)
        rows, cols = hungarian_match(cost)
        assert cols.tolist() == list(range(shape[1]))  # every object once, in order
        assert len(set(rows.tolist())) == shape[1]  # each prediction at most once
        assert cost[rows, cols].sum().item() == pytest.approx(brute_force(cost), abs=1e-6)


def random_scenes(g: torch.Generator, sizes: list[int], n_classes: int = 10):
    labels = [torch.randint(n_classes, (m,), generator=g) for m in sizes]
    centres = [torch.rand(m, 2, generator=g) * 0.6 + 0.2 for m in sizes]
    sides = [torch.rand(m, 2, generator=g) * 0.2 + 0.1 for m in sizes]
    return labels, [torch.cat(p, dim=1) for p in zip(centres, sides, strict=True)]


def test_hungarian_loss_ignores_the_order_of_the_objects():
    g = torch.Generator().manual_seed(0)
    L, B, Q, C = 2, 3, 6, 10
    out = Detections(
        torch.randn(L, B, Q, C + 1, generator=g), torch.rand(L, B, Q, 4, generator=g) * 0.5 + 0.25
    )
    labels, boxes = random_scenes(g, [3, 1, 4])
    loss = hungarian_loss(out, labels, boxes, HungarianLossWeights())
    orders = [torch.randperm(len(x), generator=g) for x in labels]
    labels_shuffled = [x[o] for x, o in zip(labels, orders, strict=True)]
    boxes_shuffled = [b[o] for b, o in zip(boxes, orders, strict=True)]
    shuffled = hungarian_loss(out, labels_shuffled, boxes_shuffled, HungarianLossWeights())
    torch.testing.assert_close(shuffled, loss)
    assert loss.item() > 0


def test_hungarian_loss_is_least_for_the_true_set():
    """Predicting exactly the objects (the rest "no object") costs less than a shifted set."""
    g = torch.Generator().manual_seed(1)
    labels, boxes = random_scenes(g, [2])
    Q, C = 4, 10
    logits = torch.full((1, 1, Q, C + 1), -10.0)
    logits[0, 0, :, C] = 10.0  # no object ...
    logits[0, 0, 1, labels[0][0]], logits[0, 0, 3, labels[0][1]] = 10.0, 10.0  # ... but these
    logits[0, 0, 1, C] = logits[0, 0, 3, C] = -10.0
    pred = torch.full((1, 1, Q, 4), 0.5)
    pred[0, 0, 1], pred[0, 0, 3] = boxes[0][0], boxes[0][1]
    w = HungarianLossWeights()
    exact = hungarian_loss(Detections(logits, pred), labels, boxes, w)
    shifted = hungarian_loss(Detections(logits, pred + 0.05), labels, boxes, w)
    assert exact.item() < 0.01 < shifted.item()


def test_generalized_iou_matches_hugging_face():
    reference = pytest.importorskip("transformers.loss.loss_for_object_detection")
    g = torch.Generator().manual_seed(2)
    a = cxcywh_to_xyxy(torch.rand(5, 4, generator=g) * 0.5 + 0.1)
    b = cxcywh_to_xyxy(torch.rand(3, 4, generator=g) * 0.5 + 0.1)
    expected = reference.generalized_box_iou(a, b)
    torch.testing.assert_close(generalized_box_iou(a, b), expected)
    assert torch.allclose(generalized_box_iou(a, a).diagonal(), torch.ones(5))
