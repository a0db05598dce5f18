import math

import numpy as np
import pytest
import torch

from aiayn.model.positional import sinusoidal_encoding


def reference(positions: np.ndarray, d_model: int) -> np.ndarray:
    """The paper's formula in float64, written out element by element."""
    pe = np.zeros((len(positions), d_model))
    for row, pos in enumerate(positions):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[row, 2 * i] = math.sin(angle)
            pe[row, 2 * i + 1] = math.cos(angle)
    return pe


def test_interleaved_is_the_papers_formula():
    positions = np.arange(0, 60)
    got = sinusoidal_encoding(torch.from_numpy(positions), 16).numpy()
    np.testing.assert_allclose(got, reference(positions, 16), atol=1e-5)


def test_concatenated_layout_is_a_permutation_of_the_interleaved_one():
    positions = torch.arange(40)
    inter = sinusoidal_encoding(positions, 8, "interleaved")
    concat = sinusoidal_encoding(positions, 8, "concatenated")
    torch.testing.assert_close(concat[:, :4], inter[:, 0::2], rtol=0, atol=0)
    torch.testing.assert_close(concat[:, 4:], inter[:, 1::2], rtol=0, atol=0)


def test_no_length_cap():
    """Tables capped at 200 or 5000 positions break long inputs; ours has no table."""
    positions = np.array([0, 4999, 5000, 12345, 100000])
    got = sinusoidal_encoding(torch.from_numpy(positions), 8).numpy()
    assert np.isfinite(got).all()
    # float32 angles are exact to about 1 ulp: ~1e-2 rad for the fastest pair at 1e5, so
    # compare the slower pairs there, where the absolute error stays small
    np.testing.assert_allclose(got[:, 4:], reference(positions, 8)[:, 4:], atol=1e-3)


def test_unknown_layout():
    with pytest.raises(ValueError, match="unknown positional layout"):
        sinusoidal_encoding(torch.arange(3), 8, "learned")
