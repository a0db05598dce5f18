"""A tiny prepared data directory and tiny-run settings shared by the training tests."""

from __future__ import annotations

import pytest

from aiayn.data.prepare import PrepareOptions, prepare
from tests.data.conftest import synthetic_pairs, write_tsv

# A run that takes seconds: the tiny model, small batches, accumulation, dropout on.
TINY_RUN = [
    "--preset", "tiny", "--max-tokens", "160", "--update-freq", "2", "--no-progress",
    "--set", "valid_every=0", "valid_bleu_sentences=8", "save_minutes=0", "log_every=1",
    "warmup=20", "dropout=0.1",
]  # fmt: skip


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train-data")
    corpus = write_tsv(tmp / "corpus.tsv", synthetic_pairs(400, seed=11))
    prepare(
        PrepareOptions(out=tmp / "data", corpus=str(corpus), valid_size=20, test_size=20,
                       vocab_size=64, progress=False)
    )  # fmt: skip
    return tmp / "data"
