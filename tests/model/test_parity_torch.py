"""Parity with torch.nn.Transformer: same weights, same logits (eval mode).

The reference is `torch_like` in harness/peers.py: the model the benchmarks time, made to
compute our function."""

import pytest
import torch

from harness.peers import torch_like
from tests.conftest import padded_batch, perturb_vectors, tiny_model

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


@pytest.mark.parametrize("activation", ["relu", "gelu", "swish"])
@pytest.mark.parametrize("positional", ["interleaved", "concatenated"])
def test_logits_equal_torch_nn_transformer(norm_first, activation, positional):
    ours = tiny_model(seed=1, norm_first=norm_first, activation=activation, positional=positional)
    perturb_vectors(ours)
    ref = torch_like(ours)
    src = padded_batch([7, 4, 9], ours.cfg, seed=2)
    tgt_in = padded_batch([5, 8, 3], ours.cfg, seed=3, start_with_bos=True)
    with torch.no_grad():
        expected = ref(src, tgt_in)
        got = ours(src, tgt_in)
    assert got.shape == (3, 8, ours.cfg.vocab_size)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_parity_would_catch_a_changed_weight():
    """The comparison is sensitive: nudging one bias moves the logits far beyond tolerance."""
    ours = tiny_model(seed=1)
    ref = torch_like(ours)
    with torch.no_grad():
        ref.core.decoder.layers[0].linear1.bias.add_(0.01)
    src = padded_batch([6, 3], ours.cfg, seed=4)
    tgt_in = padded_batch([4, 5], ours.cfg, seed=5, start_with_bos=True)
    with torch.no_grad():
        assert (ours(src, tgt_in) - ref(src, tgt_in)).abs().max() > 1e-3
