"""Training with case augmentation (`--set case_augment=P`): it changes what is trained on,
and a resumed run still ends bitwise where an uninterrupted one does, with both sides cased or
the source alone."""

import torch

from aiayn import layout
from aiayn.cli import main
from aiayn.train import checkpoint as ckpt
from tests.conftest import TINY_RUN
from tests.train.test_resume import assert_bitwise_equal, final_state


def test_a_case_augmented_run_resumes_exactly_and_differs_from_a_plain_one(tiny_data, tmp_path):
    full, part, plain = tmp_path / "full", tmp_path / "part", tmp_path / "plain"
    base = ["train", "--data", str(tiny_data), *TINY_RUN]
    cased = ["--set", "case_augment=0.5"]
    assert main([*base, *cased, "--out", str(full), "--max-steps", "12"]) == 0
    assert main([*base, *cased, "--out", str(part), "--max-steps", "5"]) == 0
    resume = ["train", "--out", str(part), "--resume", "--max-steps", "12", "--no-progress"]
    assert main(resume) == 0
    assert_bitwise_equal(full, part, 12)
    assert ckpt.read_state(layout.step_dir(part, 12))["sampler"]["case_augment"] == 0.5

    assert main([*base, "--out", str(plain), "--max-steps", "12"]) == 0
    weights, plain_weights = final_state(full, 12)[0], final_state(plain, 12)[0]
    assert any(not torch.equal(weights[name], plain_weights[name]) for name in weights)
    assert "case_augment" not in ckpt.read_state(layout.step_dir(plain, 12))["sampler"]


def test_a_source_only_run_resumes_exactly_and_differs_from_both_sides(tiny_data, tmp_path):
    full, part, both = tmp_path / "full", tmp_path / "part", tmp_path / "both"
    base = ["train", "--data", str(tiny_data), *TINY_RUN, "--set", "case_augment=0.5"]
    source = ["case_augment_sides=source"]
    assert main([*base, *source, "--out", str(full), "--max-steps", "12"]) == 0
    assert main([*base, *source, "--out", str(part), "--max-steps", "5"]) == 0
    resume = ["train", "--out", str(part), "--resume", "--max-steps", "12", "--no-progress"]
    assert main(resume) == 0
    assert_bitwise_equal(full, part, 12)
    assert ckpt.read_state(layout.step_dir(part, 12))["sampler"]["case_sides"] == "source"

    assert main([*base, "--out", str(both), "--max-steps", "12"]) == 0
    weights, both_weights = final_state(full, 12)[0], final_state(both, 12)[0]
    assert any(not torch.equal(weights[name], both_weights[name]) for name in weights)
