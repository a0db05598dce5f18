"""Shared test helpers: tiny seeded models and padded batches.

`AIAYN_TEST_DEVICE=cuda pytest tests/model tests/decode tests/train` runs the suite with torch's
default device set to that device: models and tensors the tests make land there, and the
trainer picks it. Unset, everything runs on the CPU as before.
"""

from __future__ import annotations

import os

import pytest
import torch

from aiayn import Transformer, preset
from aiayn.cli import main
from aiayn.config import ModelConfig
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.pipeline import prepare
from tests.data.conftest import synthetic_pairs, write_tsv

TEST_DEVICE = torch.device(os.environ.get("AIAYN_TEST_DEVICE", "cpu"))


def pytest_configure(config):
    if TEST_DEVICE.type != "cpu":
        torch.set_default_device(TEST_DEVICE)


def seeded(seed: int) -> torch.Generator:
    """A seeded generator on torch's default device (the test device, or the CPU inside a
    `with torch.device("cpu")` block): random test data made where the models run."""
    return torch.Generator(device=torch.get_default_device()).manual_seed(seed)


def pytest_report_header(config):
    return f"aiayn test device: {TEST_DEVICE}"


# A run that takes seconds: the tiny model, small batches, accumulation, dropout on.
TINY_RUN = [
    "--preset",
    "tiny",
    "--max-tokens",
    "160",
    "--update-freq",
    "2",
    "--no-progress",
    "--set",
    "valid_every=0",
    "valid_bleu_sentences=8",
    "save_minutes=0",
    "log_every=1",
    "warmup=20",
    "dropout=0.1",
]


def padded_batch(lengths: list[int], cfg: ModelConfig, seed: int, start_with_bos: bool = False):
    """Right-padded random token ids (B, max(lengths)); real tokens avoid the special ids."""
    L = max(lengths)
    tokens = torch.randint(3, cfg.vocab_size, (len(lengths), L), generator=seeded(seed))
    for i, n in enumerate(lengths):
        tokens[i, n:] = cfg.pad_id
    if start_with_bos:
        tokens[:, 0] = cfg.bos_id
    return tokens


def tiny_model(seed: int = 0, **changes) -> Transformer:
    """A tiny Transformer in eval mode (no dropout), seeded."""
    torch.manual_seed(seed)
    return Transformer(preset("tiny", **changes)).eval()


@torch.no_grad()
def talking_model_dir(out, tiny_data, seed: int):
    """A tiny model of random weights (d 64), scrambled so that sentences get outputs of their
    own (a briefly trained one says nothing yet), saved in `out` with the tiny data's
    SentencePiece model."""
    model = tiny_model(seed=seed, d_model=64)
    for weight in model.parameters():
        weight.add_(torch.randn_like(weight) * 0.5)
    model.save(out)
    (out / "spm.model").write_bytes((tiny_data / "spm.model").read_bytes())
    return out


@torch.no_grad()
def perturb_vectors(model: Transformer, scale: float = 0.1) -> None:
    """Move biases and LayerNorm gains off their initial 0 and 1, so a swapped one would show."""
    for p in model.parameters():
        if p.ndim == 1:
            p.add_(torch.randn_like(p) * scale)


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """Compiled decoder steps (`--compile`) go to a fresh directory, not the user's cache."""
    before = os.environ.get("AIAYN_COMPILE_CACHE")
    os.environ["AIAYN_COMPILE_CACHE"] = str(tmp_path_factory.mktemp("compiled"))
    yield
    if before is None:
        del os.environ["AIAYN_COMPILE_CACHE"]
    else:
        os.environ["AIAYN_COMPILE_CACHE"] = before


@pytest.fixture
def on_cpu():
    """For a CPU-only feature (int8 decoding): the test makes its models and data on the CPU,
    whatever the test device."""
    with torch.device("cpu"):
        yield


@pytest.fixture(params=[False, True], ids=["post-norm", "pre-norm"])
def norm_first(request) -> bool:
    return request.param


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    """A prepared data directory of synthetic word-for-word pairs (64-piece vocabulary)."""
    tmp = tmp_path_factory.mktemp("train-data")
    corpus = write_tsv(tmp / "corpus.tsv", synthetic_pairs(400, seed=11))
    prepare(
        PrepareOptions(
            out=tmp / "data",
            corpus=str(corpus),
            valid_size=20,
            test_size=20,
            vocab_size=64,
            progress=False,
        )
    )
    return tmp / "data"


@pytest.fixture(scope="session")
def tiny_run(tiny_data, tmp_path_factory):
    """A run trained for a few steps on tiny_data: something to translate, plot and serve."""
    out = tmp_path_factory.mktemp("tiny-run") / "run"
    assert (
        main(["train", "--data", str(tiny_data), "--out", str(out), *TINY_RUN, "--max-steps", "6"])
        == 0
    )
    return out
