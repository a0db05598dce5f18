"""Two processes (gloo DDP on CPU) follow one process with the same global batch."""

import subprocess
import sys
from pathlib import Path

import pytest

from aiayn.train.metrics import read_metrics

pytestmark = pytest.mark.cpu  # gloo on the CPU, whatever the test device

SETTINGS = [
    "--device",
    "cpu",
    "--preset",
    "tiny",
    "--max-tokens",
    "160",
    "--max-steps",
    "8",
    "--no-progress",
    "--set",
    "valid_every=0",
    "valid_bleu_sentences=8",
    "save_minutes=0",
    "log_every=1",
    "warmup=20",
    "dropout=0.0",
]


def files(run: Path) -> set[str]:
    return {str(p.relative_to(run)) for p in run.rglob("*") if "tensorboard" not in p.parts}


def train_losses(run: Path) -> list[float]:
    return [r["loss"] for r in read_metrics(run) if r["kind"] == "train"]


# (data, settings): bilingual, multilingual (temperature-sampled directions), bilingual with
# every pair's cased copy as one more pass of its update (case_augment_mode=add), and bilingual
# with both sides' pieces sampled anew each epoch (every process draws the same)
RUNS = {
    "bilingual": ("tiny_data", []),
    "multilingual": ("tiny_multi_data", []),
    "case copies": ("tiny_data", ["case_augment=1", "case_augment_mode=add"]),
    "subword sampling": ("tiny_data", ["subword_sampling=0.2", "subword_sampling_sides=both"]),
}


@pytest.mark.parametrize("name", RUNS)
def test_two_gloo_processes_match_one_with_the_same_global_batch(name, request, tmp_path):
    fixture, settings = RUNS[name]
    data = request.getfixturevalue(fixture)
    one, two = tmp_path / "one", tmp_path / "two"
    common = ["-m", "aiayn", "train", "--data", str(data), *SETTINGS, *settings]
    single = subprocess.run(
        [sys.executable, *common, "--out", str(one), "--update-freq", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert single.returncode == 0, single.stderr
    launcher = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
    ]
    ddp = subprocess.run(
        [*launcher, *common, "--out", str(two), "--update-freq", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ddp.returncode == 0, ddp.stderr
    a, b = train_losses(one), train_losses(two)
    assert len(a) == len(b) == 8
    # The same batches and the same gradients; only the order of floating-point sums differs.
    assert b == pytest.approx(a, rel=1e-5)
    assert a[-1] < a[0]  # and it is learning
    # Only rank 0 wrote: the same files as the single process, and nothing more.
    assert files(two) == files(one)
