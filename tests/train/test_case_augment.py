"""Training with case augmentation (`--set case_augment=P`): it changes what is trained on,
and a resumed run still ends bitwise where an uninterrupted one does, with both sides cased or
the source alone, the cased pairs in place of their own or added beside them."""

import pytest
import torch

from aiayn import layout
from aiayn.cli import main
from aiayn.train import checkpoint as ckpt
from tests.conftest import TINY_RUN
from tests.train.test_resume import assert_bitwise_equal, final_state

# (the run's settings, what its sampler state records, the settings of a run it must differ from)
RUNS = {
    "both sides": (["case_augment=0.5"], ("case_augment", 0.5), []),
    "source only": (
        ["case_augment=0.5", "case_augment_sides=source"],
        ("case_sides", "source"),
        ["case_augment=0.5"],
    ),
    "added": (
        ["case_augment=0.5", "case_augment_mode=add"],
        ("case_mode", "add"),
        ["case_augment=0.5"],
    ),
}


@pytest.mark.parametrize("run", RUNS)
def test_a_case_augmented_run_resumes_exactly_and_differs_from_another(run, tiny_data, tmp_path):
    settings, (key, value), other_settings = RUNS[run]
    full, part, other = tmp_path / "full", tmp_path / "part", tmp_path / "other"
    base = ["train", "--data", str(tiny_data), *TINY_RUN]
    cased = ["--set", *settings]
    assert main([*base, *cased, "--out", str(full), "--max-steps", "12"]) == 0
    assert main([*base, *cased, "--out", str(part), "--max-steps", "5"]) == 0
    resume = ["train", "--out", str(part), "--resume", "--max-steps", "12", "--no-progress"]
    assert main(resume) == 0
    assert_bitwise_equal(full, part, 12)
    assert ckpt.read_state(layout.step_dir(part, 12))["sampler"][key] == value

    sets = ["--set", *other_settings] if other_settings else []
    assert main([*base, *sets, "--out", str(other), "--max-steps", "12"]) == 0
    weights, other_weights = final_state(full, 12)[0], final_state(other, 12)[0]
    assert any(not torch.equal(weights[name], other_weights[name]) for name in weights)
    assert key not in ckpt.read_state(layout.step_dir(other, 12))["sampler"]
