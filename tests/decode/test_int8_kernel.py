"""aiayn's int8 kernel (`int8_kernel`): exact int8 sums, packed slices, and the switch."""

from __future__ import annotations

import shutil

import pytest
import torch

from aiayn.decode import int8_kernel
from aiayn.decode.compile_cache import cxx
from aiayn.decode.precision import Int8Linear


def reference(x: torch.Tensor, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The kernel's arithmetic: each row of x to int8 by its absmax in float32 (its rounding),
    then exact sums, scaled in float64."""
    amax = x.float().abs().amax(dim=1, keepdim=True)  # (M, 1)
    x_scale = torch.where(amax > 0, amax / 127, 1.0)
    q = (x.float() * (1 / x_scale)).round()  # (M, K)
    return (q.double() @ w.double().T) * x_scale.double() * scale.double()  # (M, N)


def test_the_kernel_builds_where_a_compiler_is():
    assert int8_kernel.available() == (shutil.which(cxx()) is not None)


@pytest.mark.parametrize(("M", "K", "N"), [(1, 256, 256), (3, 37, 21), (40, 512, 1000), (2, 4, 1)])
def test_products_are_the_exact_int8_sums_scaled(M, K, N):
    """Every block layout edge: N and K off the block sizes, one row and many (threads), and a
    row of zeros; the sums are exact, so only bf16's rounding of the result is left."""
    if not int8_kernel.available():
        pytest.fail("the int8 kernel did not build")
    g = torch.Generator().manual_seed(M * K + N)
    x = torch.randn(M, K, generator=g).bfloat16()
    if M > 1:
        x[-1] = 0  # a row of zeros: scale 1, sums 0
    w = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    scale = (torch.rand(N, generator=g) / 100 + 1e-3).bfloat16()
    packed = int8_kernel.pack(w)
    assert packed.shape == (-(-N // 16) * 16, -(-K // 4) * 4)
    got = int8_kernel.int8_mm(x, packed, scale)
    assert got.shape == (M, N) and got.dtype == torch.bfloat16
    torch.testing.assert_close(got.double(), reference(x, w, scale), rtol=1e-2, atol=1e-3)


def test_packed_rows_slice_by_whole_blocks():
    """Rows 16i.. of a packed matrix are outputs 16i..: a slice is the slice's own product."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 64, generator=g).bfloat16()
    w = torch.randint(-127, 128, (70, 64), generator=g, dtype=torch.int8)
    scale = torch.full((70,), 0.01).bfloat16()
    whole = int8_kernel.int8_mm(x, int8_kernel.pack(w), scale)
    part = int8_kernel.int8_mm(x, int8_kernel.pack(w)[32:], scale[32:])
    assert torch.equal(part, whole[:, 32:])


def test_weights_of_minus_128_are_refused():
    w = torch.full((16, 4), -128, dtype=torch.int8)
    with pytest.raises(RuntimeError, match=r"\[-127, 127\]"):
        int8_kernel.pack(w)


def test_switched_off_the_layers_keep_pytorchs_weight_only_kernel(monkeypatch):
    """AIAYN_INT8_KERNEL=0: no packed copy, and the product is `_weight_int8pack_mm`'s."""
    linear = torch.nn.Linear(64, 48)
    monkeypatch.setenv("AIAYN_INT8_KERNEL", "0")
    off = Int8Linear(linear)
    assert off.packed is None
    x = torch.randn(3, 64).bfloat16()
    expected = torch._weight_int8pack_mm(x, off.weight, off.scale) + off.bias
    assert torch.equal(off(x), expected)
    monkeypatch.delenv("AIAYN_INT8_KERNEL")
    on = Int8Linear(linear)
    assert (on.packed is not None) == int8_kernel.available()
