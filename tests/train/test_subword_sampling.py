"""Training with subword sampling (`--set subword_sampling=ALPHA`): at 0 a run is the run of
before, bit for bit; on, it changes what is trained on, and a run stopped in a later epoch and
resumed ends bitwise where an uninterrupted one does (sources sampled, or both sides)."""

import pytest
import torch

from aiayn import layout
from aiayn.cli import main
from aiayn.data.batches.dataset import ParallelData
from aiayn.data.batches.subword_sampling import SubwordSampling
from aiayn.data.data_dir import DataDir
from aiayn.data.languages import TAG
from aiayn.data.tokenizer import Tokenizer
from aiayn.train import checkpoint as ckpt
from tests.conftest import TINY_RUN
from tests.data.conftest import prepared_tsv, synthetic_pairs, write_tsv
from tests.train.test_resume import assert_bitwise_equal, final_state


@pytest.fixture(scope="module")
def few_pairs(tmp_path_factory):
    """About 40 training pairs: an epoch of TINY_RUN is a few updates, so short runs cross
    epochs."""
    root = tmp_path_factory.mktemp("few-pairs")
    corpus = write_tsv(root / "c.tsv", synthetic_pairs(60, seed=7))
    return prepared_tsv(corpus, root / "data", valid_size=10, test_size=10, vocab_size=64)


def train(data, out, steps: int, *sets: str) -> None:
    argv = ["train", "--data", str(data), *TINY_RUN, "tune_search=false", *sets]
    assert main([*argv, "--out", str(out), "--max-steps", str(steps)]) == 0


def test_at_zero_a_run_is_the_run_without_it(tiny_data, tmp_path):
    train(tiny_data, tmp_path / "without", 6)
    train(tiny_data, tmp_path / "zero", 6, "subword_sampling=0")
    assert_bitwise_equal(tmp_path / "without", tmp_path / "zero", 6)
    assert (
        "subword_sampling" not in ckpt.read_state(layout.step_dir(tmp_path / "zero", 6))["sampler"]
    )


def test_a_sampled_run_resumes_exactly_and_differs_from_another(few_pairs, tmp_path):
    both = ["subword_sampling=0.2", "subword_sampling_sides=both"]
    full, part, other = tmp_path / "full", tmp_path / "part", tmp_path / "other"
    train(few_pairs, full, 10, *both)
    train(few_pairs, part, 6, *both)
    stopped = ckpt.read_state(layout.step_dir(part, 6))["sampler"]
    assert stopped["epoch"] >= 1  # stopped in a later epoch than the first
    assert (stopped["subword_sampling"], stopped["subword_sides"]) == (0.2, "both")
    resume = ["train", "--out", str(part), "--resume", "--max-steps", "10", "--no-progress"]
    assert main(resume) == 0
    assert_bitwise_equal(full, part, 10)

    train(few_pairs, other, 10, "subword_sampling=0.2")  # the sources alone sampled
    assert "subword_sides" not in ckpt.read_state(layout.step_dir(other, 10))["sampler"]
    weights, other_weights = final_state(full, 10)[0], final_state(other, 10)[0]
    assert any(not torch.equal(weights[name], other_weights[name]) for name in weights)


def test_language_tags_stay_whole_pieces(tiny_multi_data):
    files = DataDir.open(tiny_multi_data)
    tokenizer = Tokenizer(files.tokenizer)
    prepared = ParallelData(files, "train")
    texts = (files.text("train", "src"), files.text("train", "tgt"))
    drawn = SubwordSampling(0.5, 1, texts, tokenizer, prepared, 4096).draw(0)
    changed = 0
    for i in range(len(prepared)):
        sampled, own = drawn.pair(i)[0].tolist(), prepared.pair(i)[0].tolist()
        tag = next(k for k, piece in enumerate(tokenizer.pieces(own)) if TAG.fullmatch(piece))
        assert sampled[: tag + 1] == own[: tag + 1], i  # the tag one piece, where it was
        assert tokenizer.decode([sampled]) == tokenizer.decode([own]), i
        changed += sampled != own
    assert changed > len(prepared) / 2
