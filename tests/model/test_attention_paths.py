"""The explicit attention path (CPU bf16 training, decoding steps, plots) computes what the
fused kernel computes, values and gradients, and gives a query with no key zero weight."""

import pytest
import torch

import aiayn.model.attention as attention
from aiayn.model.attention import scaled_dot_product_attention

pytestmark = pytest.mark.usefixtures("on_cpu")  # the explicit path is the CPU's (bf16 training)


def qkv(dtype: torch.dtype, T: int = 9, S: int = 9, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(3, 2, L, 8, generator=g).to(dtype).requires_grad_() for L in (T, S, S)]


def grads_of(out: torch.Tensor, tensors, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    out.backward(torch.randn(out.shape, generator=g).to(out.dtype))
    return [t.grad.float() for t in tensors]


def test_bf16_training_takes_the_explicit_path_and_fp32_the_fused_one():
    q32, _, _ = qkv(torch.float32)
    q16, _, _ = qkv(torch.bfloat16)
    assert attention._explicit_on_cpu(q16)
    assert not attention._explicit_on_cpu(q32)
    with torch.no_grad():  # inference with many queries keeps the fused kernel
        assert not attention._explicit_on_cpu(q16)


@pytest.mark.parametrize("kind", ["padding", "causal"])
def test_bf16_explicit_path_matches_fp32_fused_values_and_gradients(kind):
    mask = None
    if kind == "padding":
        mask = torch.ones(3, 1, 1, 9, dtype=torch.bool)
        mask[0, ..., 5:] = False
        mask[2, ..., 2:] = False
    reference = qkv(torch.float32)
    out32, _ = scaled_dot_product_attention(*reference, mask=mask, is_causal=kind == "causal")
    want = grads_of(out32, reference)
    low = qkv(torch.bfloat16)
    out16, _ = scaled_dot_product_attention(*low, mask=mask, is_causal=kind == "causal")
    got = grads_of(out16, low)
    # bf16 keeps 8 bits of mantissa: errors of a few 1e-2 on values of order 1.
    torch.testing.assert_close(out16.float(), out32.detach(), atol=4e-2, rtol=4e-2)
    for g16, g32 in zip(got, want, strict=True):
        torch.testing.assert_close(g16, g32, atol=6e-2, rtol=6e-2)


def test_a_query_with_no_key_gets_no_weight_on_the_explicit_path():
    q, k, v = qkv(torch.bfloat16)
    mask = torch.ones(3, 1, 9, 9, dtype=torch.bool)
    mask[1, :, 4] = False  # query 4 of sequence 1 sees nothing
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, need_weights=True)
    assert torch.isfinite(out).all()
    assert (weights[1, :, 4] == 0).all() and (out[1, :, 4] == 0).all()
    out.float().sum().backward()
    assert torch.isfinite(q.grad.float()).all()
