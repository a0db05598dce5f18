"""Vision configs take `--set key=value` through the text side's one `apply_overrides`."""

import dataclasses
import re

import pytest

from aiayn.config.overrides import apply_overrides
from aiayn.vision.config import VisionTrainConfig, vision_preset


def test_each_override_reaches_the_config_that_has_its_key():
    tiny = vision_preset("tiny-classify")
    model, train = apply_overrides(tiny, VisionTrainConfig(), ["d_model=32", "augment=no"])
    assert model == dataclasses.replace(tiny, d_model=32)
    assert train == VisionTrainConfig(augment=False)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("colour=red", "--set colour: unknown key; model keys: task, image_size"),
        ("max_steps=ten", "--set max_steps=ten: expected a int"),
        ("augment", "--set 'augment': write key=value"),
    ],
)
def test_a_bad_override_names_itself(item, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        apply_overrides(vision_preset("tiny-classify"), VisionTrainConfig(), [item])
