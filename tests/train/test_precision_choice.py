"""The recipe's bf16 where the CPU computes it fast, fp32 where it would crawl; asked for by name,
bf16 is kept."""

import json

import pytest
import torch

import aiayn.train.precision as precision
from aiayn.cli import main
from aiayn.config import RECIPES, TrainConfig
from tests.conftest import TINY_RUN

CPU = torch.device("cpu")


@pytest.fixture
def no_bf16_kernels(monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16_kernels", lambda: False)


def test_a_cpu_without_bf16_kernels_trains_the_recipe_in_fp32(no_bf16_kernels):
    cfg, note = precision.precision_for(RECIPES["short"], CPU, named=False)
    assert cfg.precision == "fp32" and "no AVX-512" in note and "--precision bf16" in note
    assert cfg == TrainConfig(**{**vars(RECIPES["short"]), "precision": "fp32"})  # nothing else


@pytest.mark.parametrize(
    ("named", "device", "kernels", "recipe"),
    [
        (True, CPU, False, "short"),  # asked for by name: kept
        (False, CPU, True, "short"),  # a CPU that has them
        (False, CPU, None, "short"),  # a CPU that cannot tell (not x86)
        (False, torch.device("cuda"), False, "short"),  # a GPU: not this rule's
        (False, CPU, False, "paper"),  # fp32 already
    ],
)
def test_otherwise_the_precision_is_left_as_asked(monkeypatch, named, device, kernels, recipe):
    monkeypatch.setattr(precision, "cpu_has_bf16_kernels", lambda: kernels)
    cfg, note = precision.precision_for(RECIPES[recipe], device, named)
    assert (cfg, note) == (RECIPES[recipe], None)


def test_the_probe_answers_on_x86_and_says_unknown_elsewhere(monkeypatch):
    monkeypatch.setattr(precision.platform, "machine", lambda: "x86_64")
    assert isinstance(precision.cpu_has_bf16_kernels(), bool)
    monkeypatch.setattr(precision.platform, "machine", lambda: "aarch64")
    assert precision.cpu_has_bf16_kernels() is None


@pytest.mark.parametrize(
    ("extra", "saved"),
    [([], "fp32"), (["--precision", "bf16"], "bf16"), (["--set", "precision=bf16"], "bf16")],
)
def test_train_records_and_says_the_precision_it_chose(
    no_bf16_kernels, tiny_data, tmp_path, capsys, extra, saved
):
    out = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(out), "--recipe", "short"]
    assert main([*args, *TINY_RUN, "--max-steps", "1", "--device", "cpu", *extra]) == 0
    assert json.loads((out / "run.json").read_text())["train"]["precision"] == saved
    said = "precision: fp32, not the recipe's bf16" in capsys.readouterr().err
    assert said == (saved == "fp32")
