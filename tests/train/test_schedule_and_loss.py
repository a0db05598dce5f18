"""The learning-rate schedule and the label-smoothed loss, against hand-computed values."""

import itertools
import math

import pytest
import torch

from aiayn.train import loss as loss_module
from aiayn.train.loss import label_smoothed_loss, projected_smoothed_loss
from aiayn.train.schedule import learning_rate


def test_schedule_hand_computed():
    # d_model 512, warmup 4000: lr = 512^-0.5 * min(step^-0.5, step * 4000^-1.5)
    assert learning_rate(1, 512) == pytest.approx(512**-0.5 * 4000**-1.5)
    assert learning_rate(1, 512) == pytest.approx(1.7469281e-07)  # 0.0441942 * 3.9528471e-6
    assert learning_rate(4000, 512) == pytest.approx(0.0006987712429686843)  # the peak
    assert learning_rate(16000, 512) == pytest.approx(3.4938562e-4)  # 0.0441942 / 126.49
    assert learning_rate(2000, 256, warmup=1000, scale=2.0) == pytest.approx(
        2 * 256**-0.5 * 2000**-0.5
    )


def test_schedule_shape():
    lrs = [learning_rate(s, 512) for s in range(1, 20001)]
    peak = max(range(len(lrs)), key=lrs.__getitem__) + 1
    assert peak == 4000
    assert all(a < b for a, b in itertools.pairwise(lrs[:4000]))  # linear warmup
    assert all(a > b for a, b in itertools.pairwise(lrs[3999:]))  # then decay
    with pytest.raises(ValueError, match="steps count from 1"):
        learning_rate(0, 512)


def test_smoothed_loss_hand_computed_with_padding():
    # V = 4 (pad = 0). Two positions: a real token (gold 2) and padding.
    logits = torch.tensor([[[0.0, 1.0, 2.0, 3.0], [5.0, -1.0, 0.5, 2.0]]])
    target = torch.tensor([[2, 0]])
    z = math.log(sum(math.exp(x) for x in [0.0, 1.0, 2.0, 3.0]))
    lp = [x - z for x in [0.0, 1.0, 2.0, 3.0]]
    eps = 0.1
    # q: 0.9 on token 2, 0.1 / (4 - 2) = 0.05 on tokens 1 and 3, nothing on padding
    expected = -(0.9 * lp[2] + 0.05 * lp[1] + 0.05 * lp[3])
    loss, nll = label_smoothed_loss(logits, target, eps, pad_id=0)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    assert nll.item() == pytest.approx(-lp[2], rel=1e-6)  # the padding position adds nothing


def test_smoothed_loss_is_the_kl_to_q_plus_its_entropy():
    """A check independent of the formula: the smoothed loss is cross-entropy against q."""
    torch.manual_seed(0)
    V, pad = 7, 0
    logits = torch.randn(2, 5, V)
    target = torch.randint(1, V, (2, 5))
    target[1, 3:] = pad
    q = torch.full((2, 5, V), 0.2 / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 0.8)
    q[..., pad] = 0
    assert torch.allclose(q.sum(-1)[target != pad], torch.ones(8))
    per_position = -(q * torch.log_softmax(logits, -1)).sum(-1)
    expected = per_position[target != pad].sum()
    loss, _ = label_smoothed_loss(logits, target, 0.2, pad)
    torch.testing.assert_close(loss, expected)


def test_no_smoothing_is_cross_entropy_ignoring_padding():
    torch.manual_seed(1)
    logits = torch.randn(3, 4, 9)
    target = torch.randint(1, 9, (3, 4))
    target[0, 2:] = 0
    loss, nll = label_smoothed_loss(logits, target, 0.0, pad_id=0)
    ref = torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), target.flatten(), ignore_index=0, reduction="sum"
    )
    torch.testing.assert_close(loss, ref)
    torch.testing.assert_close(nll, ref)


def test_bf16_logits_are_scored_in_fp32():
    logits = torch.randn(2, 3, 11).bfloat16()
    target = torch.randint(1, 11, (2, 3))
    loss, _ = label_smoothed_loss(logits, target, 0.1, 0)
    assert loss.dtype == torch.float32


def reference_loss(logits, target, eps, pad):
    """The loss written plainly, for autograd to differentiate."""
    V = logits.shape[-1]
    lp = torch.log_softmax(logits, -1)
    q = torch.full_like(lp, eps / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - eps)
    q[..., pad] = 0
    real = target != pad
    return -(q * lp).sum(-1)[real].sum(), -lp.gather(-1, target.unsqueeze(-1)).squeeze(-1)[
        real
    ].sum()


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_hand_written_gradient_equals_autograd(eps):
    torch.manual_seed(2)
    logits = torch.randn(3, 5, 11, dtype=torch.float64, requires_grad=True)
    target = torch.randint(1, 11, (3, 5))
    target[2, 2:] = 0
    w_loss, w_nll = 0.7, 0.3  # both outputs used, with different weights
    loss, nll = label_smoothed_loss(logits, target, eps, pad_id=0)
    (grad,) = torch.autograd.grad(w_loss * loss + w_nll * nll, logits)
    ref_loss, ref_nll = reference_loss(logits, target, eps, 0)
    (expected,) = torch.autograd.grad(w_loss * ref_loss + w_nll * ref_nll, logits)
    torch.testing.assert_close(loss, ref_loss.float(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(grad, expected.float().double(), rtol=1e-5, atol=1e-6)
    assert torch.all(grad[2, 2:] == 0)  # padding positions: no gradient


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_projected_loss_equals_projecting_then_the_loss(eps, monkeypatch):
    """The fused projection + loss: the same values and gradients as the two steps apart,
    over several row chunks, padding included."""
    monkeypatch.setattr(loss_module, "PROJECTED_CHUNK_ELEMENTS", 11 * 2)  # float64: 4 rows a chunk
    monkeypatch.setattr(loss_module, "GPU_CHUNK_ELEMENTS", 11 * 4)  # the same on a GPU
    torch.manual_seed(3)
    states = torch.randn(15, 6, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(11, 6, dtype=torch.float64, requires_grad=True)
    target = torch.randint(1, 11, (15,))
    target[[2, 9]] = 0
    ref_loss, ref_nll = reference_loss(states @ weight.t(), target, eps, 0)
    expected = torch.autograd.grad(0.7 * ref_loss, (states, weight))
    loss, nll = projected_smoothed_loss(states, weight, target, eps, pad_id=0)
    grads = torch.autograd.grad(0.7 * loss, (states, weight))
    torch.testing.assert_close(loss, ref_loss.float(), rtol=1e-6, atol=1e-5)
    torch.testing.assert_close(nll, ref_nll.float(), rtol=1e-6, atol=1e-5)
    assert not nll.requires_grad
    for got, want in zip(grads, expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    with torch.no_grad():  # validation: no gradients computed, the same values
        torch.testing.assert_close(projected_smoothed_loss(states, weight, target, eps, 0)[0], loss)


def test_projected_loss_under_bf16_autocast_is_close_to_fp32():
    torch.manual_seed(4)
    states = torch.randn(300, 32, requires_grad=True)
    weight = (0.2 * torch.randn(500, 32)).requires_grad_()
    target = torch.randint(1, 500, (300,))
    loss32, _ = projected_smoothed_loss(states, weight, target, 0.1, 0)
    grads32 = torch.autograd.grad(loss32, (states, weight))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss16, _ = projected_smoothed_loss(states, weight, target, 0.1, 0)
    grads16 = torch.autograd.grad(loss16, (states, weight))
    assert loss16.dtype == torch.float32
    assert loss16.item() == pytest.approx(loss32.item(), rel=5e-3)
    for g16, g32 in zip(grads16, grads32, strict=True):
        assert g16.dtype == torch.float32
        assert ((g16 - g32).norm() / g32.norm()).item() < 0.02


def test_a_gpu_takes_few_large_chunks_and_a_cpu_cache_sized_ones():
    """The CUDA branch's logic, checked on any machine: the base model's 37,000-piece output on
    a 25,000-token batch is 4 chunks on a GPU; on a CPU, blocks of 2M (16-bit) or 4M (float32)
    elements, as measured there."""
    cuda, cpu, V = torch.device("cuda"), torch.device("cpu"), 37_000
    assert -(-25_000 // loss_module.chunk_rows(V, torch.bfloat16, cuda)) == 4
    assert loss_module.chunk_rows(V, torch.bfloat16, cpu) == (1 << 21) // V
    assert loss_module.chunk_rows(V, torch.float32, cpu) == (1 << 22) // V
    assert loss_module.chunk_rows(10**9, torch.float32, cuda) == 1  # never zero rows
