"""One row by int8 weights: which product PyTorch offers multiplies it fastest on this CPU.

    .venv/bin/python experiments/decode_compile/int8_gemv.py [--rounds 7] [--calls 1000]

At batch 1 greedy a decoder step is seven products of one row (1 x 256 by 256 x 256 ... 1,024),
and the compiled step's weight-only int8 kernel (`_weight_int8pack_mm`, bf16 activations) spends
55% of it there; CTranslate2 multiplies int8 by int8 (oneDNN's u8s8s32) in about half that time.
Every one-row product PyTorch 2.13 has for int8 weights, on one thread, each timed over
`--calls` calls, the forms taking turns for `--rounds` rounds: us a call, median (min-max).
PyTorch's int8-by-int8 kernels are timed on activations already quantized, so they are their best
case; aiayn's own (`aiayn.decode.int8_kernel`, the answer to this question) quantizes its bf16
input inside the call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: harness/

from aiayn.decode import int8_kernel
from harness.machine import cpu_model

SHAPES = ((1, 256, 256), (1, 256, 768), (1, 256, 1024), (1, 1024, 256), (4, 256, 256))


def forms(rows: int, n_in: int, n_out: int) -> dict[str, Callable[[], Tensor]]:
    """The products of a (rows, n_in) input by one (n_out, n_in) int8 matrix, each a call."""
    x = torch.randn(rows, n_in)
    w = torch.randn(n_out, n_in)
    scale = w.abs().amax(dim=1) / 127  # (out,)
    wq = (w / scale[:, None]).round().to(torch.int8)  # (out, in)
    bias = torch.randn(n_out) * 0.01
    xb, scale_b, bias_b = x.bfloat16(), scale.bfloat16(), bias.bfloat16()
    x_scale = float(x.abs().max() / 127)
    x_s8 = (x / x_scale).round().to(torch.int8)
    x_u8 = (x_s8.int() + 128).to(torch.uint8)
    zero_points = torch.zeros(n_out, dtype=torch.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qw = torch.quantize_per_channel(
            wq.float() * scale[:, None], scale, zero_points, 0, torch.qint8
        )
    fbgemm = torch.ops.quantized.linear_prepack(qw, bias)
    onednn = torch.ops.onednn.qlinear_prepack(wq, [rows, n_in])
    onednn_args = (x_scale, 128, onednn, scale, zero_points, bias, 1.0, 0, torch.float32)
    wf = wq.float() * scale[:, None]
    dequant = torch.compile(lambda h: (h[:, None, :] * wq.float()).sum(-1) * scale + bias)
    packed = int8_kernel.pack(wq) if int8_kernel.available() else None
    ours = {} if packed is None else {
        "aiayn int8_kernel, bf16 in and out": lambda: (
            int8_kernel.int8_mm(xb, packed, scale_b) + bias_b
        ),
    }  # fmt: skip
    return ours | {
        "F.linear float32": lambda: F.linear(x, wf, bias),
        "_weight_int8pack_mm, bf16 (ours)": lambda: (
            torch._weight_int8pack_mm(xb, wq, scale_b) + bias_b
        ),
        "fbgemm dynamic int8 (quantized.linear_dynamic)": lambda: (
            torch.ops.quantized.linear_dynamic(x, fbgemm)
        ),
        "_int_mm int8 x int8": lambda: torch._int_mm(x_s8, wq.t()),
        "onednn.qlinear_pointwise u8 x s8": lambda: torch.ops.onednn.qlinear_pointwise(
            x_u8, *onednn_args, "none", [], ""
        ),
        "inductor's own loop, int8 weights": lambda: dequant(x),
    }


def per_call_us(f: Callable[[], Tensor], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=1000)
    a = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rounds = f"{a.rounds} rounds of {a.calls} calls"
    print(f"{cpu_model()}, torch {torch.__version__}, one thread, {rounds}")
    for shape in SHAPES:
        found: dict[str, list[float]] = {}
        with torch.inference_mode():
            calls = forms(*shape)
            for f in calls.values():  # warm-up (and the compile)
                for _ in range(50):
                    f()
            for _ in range(a.rounds):
                for name, f in calls.items():
                    found.setdefault(name, []).append(per_call_us(f, a.calls))
        print(f"\n{' x '.join(map(str, shape))}")
        for name, times in found.items():
            spread = f"{min(times):.1f}-{max(times):.1f}"
            print(f"| {name} | {statistics.median(times):.1f} ({spread}) |")


if __name__ == "__main__":
    main()
