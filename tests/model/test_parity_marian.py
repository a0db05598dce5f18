"""Parity with Hugging Face MarianMTModel (random weights; nothing is downloaded).

Marian is post-norm with the concatenated sin|cos layout and embeddings scaled by sqrt(d_model):
with `positional="concatenated"` and the same activation our model computes the same function.
The reference is `marian_like` in harness/peers.py (the benchmarks' Marian, our weights).
"""

import pytest
import torch

from harness.peers import marian_like
from tests.conftest import padded_batch, perturb_vectors, tiny_model


@pytest.mark.parametrize("activation", ["relu", "gelu", "swish"])
def test_logits_equal_marian(activation):
    ours = tiny_model(seed=3, positional="concatenated", activation=activation)
    perturb_vectors(ours)
    marian = marian_like(ours)
    src = padded_batch([9, 5, 2, 7], ours.cfg, seed=6)
    tgt_in = padded_batch([6, 2, 9, 4], ours.cfg, seed=7, start_with_bos=True)
    with torch.no_grad():
        expected = marian(
            input_ids=src, attention_mask=(src != ours.cfg.pad_id).long(), decoder_input_ids=tgt_in
        ).logits
        got = ours(src, tgt_in)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-4)


def test_the_papers_interleaved_layout_is_not_marians():
    """The layouts differ (PAPER.md): the default model must not match Marian by accident."""
    ours = tiny_model(seed=3)
    marian = marian_like(ours)
    src = padded_batch([5, 3], ours.cfg, seed=8)
    tgt_in = padded_batch([4, 4], ours.cfg, seed=9, start_with_bos=True)
    with torch.no_grad():
        diff = (ours(src, tgt_in) - marian(input_ids=src, decoder_input_ids=tgt_in).logits).abs()
    assert diff.max() > 1e-2
