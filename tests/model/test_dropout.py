"""The CPU dropout: its drop rate, scaling, gradient and repeatability (on another test device,
torch's fused dropout runs, with the exact probability)."""

import pytest
import torch

from aiayn.model.dropout import LEVELS, Dropout, dropout, keep_mask
from tests.conftest import TEST_DEVICE


def test_drops_the_asked_fraction_and_keeps_the_expectation():
    torch.manual_seed(0)
    x = torch.ones(1000, 1000)
    y = dropout(x, 0.1, training=True)
    dropped = (y == 0).float().mean().item()
    assert dropped == pytest.approx(0.1, abs=0.002)  # 1M draws: the standard error is 0.0003
    q = round(0.1 * LEVELS) / LEVELS if TEST_DEVICE.type == "cpu" else 0.1
    kept = y[y != 0]
    assert torch.all(kept == 1 / (1 - q))
    assert y.mean().item() == pytest.approx(1.0, abs=0.005)


def test_every_bit_pattern_position_is_used():
    """Draws are packed four to a 64-bit number: each of the four slots must drop alike."""
    torch.manual_seed(1)
    y = dropout(torch.ones(4 * 100_000), 0.5, training=True).view(-1, 4)
    rates = (y == 0).float().mean(0)
    assert torch.allclose(rates, torch.full((4,), 0.5), atol=0.01)


def test_gradient_is_the_mask_times_the_scale():
    torch.manual_seed(2)
    x = torch.randn(64, 33, dtype=torch.float64, requires_grad=True)
    y = dropout(x, 0.3, training=True)
    (grad,) = torch.autograd.grad(y.sum(), x)
    scale = y.detach()[y != 0] / x.detach()[y != 0]
    assert torch.allclose(scale, torch.full_like(scale, LEVELS / (LEVELS - round(0.3 * LEVELS))))
    torch.testing.assert_close(grad, torch.where(y != 0, scale[0], 0.0))


def test_seeded_runs_repeat_and_eval_is_the_identity():
    x = torch.randn(10, 20).bfloat16()
    torch.manual_seed(3)
    a = dropout(x, 0.1, training=True)
    torch.manual_seed(3)
    b = dropout(x, 0.1, training=True)
    assert torch.equal(a, b) and a.dtype == torch.bfloat16
    module = Dropout(0.1).eval()
    assert module(x) is x
    assert dropout(x, 0.0, training=True) is x
    assert torch.all(dropout(x, 1.0, training=True) == 0)
    with pytest.raises(ValueError, match=r"in \[0, 1\], got 1.5"):
        Dropout(1.5)


@pytest.mark.skipif(TEST_DEVICE.type != "cpu", reason="the multiplier is the CPU path")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
def test_the_multiplier_gives_what_the_bool_mask_gives(dtype):
    """Inputs multiply by a mask in their own dtype: the values and gradient must be bit for bit
    those of selecting with the bool mask and scaling."""
    x = torch.randn(37, 29).to(dtype).requires_grad_()
    torch.manual_seed(4)
    y = dropout(x, 0.2, training=True)
    (grad,) = torch.autograd.grad(y, x, torch.ones_like(y))
    torch.manual_seed(4)
    keep, scale = keep_mask(x.shape, 0.2, x.device)
    assert torch.equal(y, torch.where(keep, x.detach(), 0).mul_(scale))
    assert torch.equal(grad, torch.where(keep, torch.ones_like(y), 0).mul_(scale))
    assert 0.15 < (y == 0).float().mean().item() < 0.25
