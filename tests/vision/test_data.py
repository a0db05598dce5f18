"""The digit splits and the scenes composed from them."""

from __future__ import annotations

import torch

from aiayn.vision.data import INK, digits, make_scene, train_seeds


def test_splits_hold_disjoint_digits_and_all_of_them():
    seen = [digits(s)[0].flatten(1) for s in ("train", "valid", "test")]
    assert sum(len(x) for x in seen) == 1797
    train = {tuple(r.tolist()) for r in seen[0]}
    test = {tuple(r.tolist()) for r in seen[2]}
    # load_digits has a handful of exact duplicate images; almost none may cross the split
    assert len(train & test) <= 3
    assert set(digits("test")[1].tolist()) == set(range(10))


def test_scene_boxes_enclose_exactly_each_digit_mask():
    for seed in range(20):
        scene = make_scene("test", seed, size=32)
        assert 1 <= len(scene.labels) <= 3
        for label, (cx, cy, w, h) in zip(scene.labels, scene.boxes * 32, strict=True):
            ink = (scene.mask == label + 1).nonzero()  # (pixels, 2) as (y, x)
            # the box is the tight box of its digit's pixels (a digit class may repeat: >=)
            x0, x1, y0, y1 = cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2
            inside = (ink[:, 1] >= x0) & (ink[:, 1] < x1) & (ink[:, 0] >= y0) & (ink[:, 0] < y1)
            assert inside.any()
        assert torch.equal(scene.mask > 0, scene.image[0] > INK)


def test_scenes_are_seeded_and_steps_differ():
    a, b = make_scene("train", 7), make_scene("train", 7)
    assert torch.equal(a.image, b.image) and torch.equal(a.boxes, b.boxes)
    assert not torch.equal(make_scene("train", 8).image, a.image)
    assert set(train_seeds(3, 4, 1)).isdisjoint(train_seeds(4, 4, 1))
