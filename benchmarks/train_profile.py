"""Where a training step's time goes: matrix products against the rest, aiayn against HF Marian.

    .venv/bin/python benchmarks/train_profile.py [--data data/en-de] [--batches 12]
        [--precision bf16|fp32]

Profiles (`torch.profiler`) one pass of each system over the same real batches as
`train_bench.py`, after a pass that warms up, and prints per step: the wall time, the CPU time
in matrix products (`mm`, `addmm`, `bmm`, `baddbmm`) and in everything else, and the largest
operators; then the ceiling on aiayn's speed against Marian's if everything but aiayn's matrix
products and fused attention kernels took no time, and what the like-with-like bar of the
training issue (bf16: 2x HF Marian bf16; fp32: 1.3x HF Marian fp32) leaves for everything else.
Like `train_bench.py`, it runs on tcmalloc where installed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from train_bench import BARS, aiayn_step, marian_step, real_batches

from aiayn.train.host_memory import allocator, restart_with_tcmalloc
from harness.machine import cpu_model

MATRIX_PRODUCTS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
FUSED_ATTENTION = {  # mostly matrix products too: part of the floor under a step
    "aten::_scaled_dot_product_flash_attention_for_cpu",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
}


def per_step_ms(ops, n: int, names: set[str] | None = None) -> float:
    """CPU time per step in the operators called `names` (all of them when None)."""
    return sum(op.self_cpu_time_total for op in ops if names is None or op.key in names) / 1e3 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--precision", choices=("bf16", "fp32"), default="bf16")
    args = parser.parse_args()
    restart_with_tcmalloc(sys.orig_argv)
    cfg, indices, raw = real_batches(args.data, "small", args.batches, 4096)
    work = Path(tempfile.mkdtemp(prefix="train-profile-"))
    steps = {
        "aiayn": aiayn_step(args.data, indices, cfg, args.precision, 4096, work),
        "HF Marian": marian_step(cfg, args.precision, "theirs", raw),
    }
    print(
        f"CPU: {cpu_model()}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{allocator()} allocator; {args.precision}, {len(raw)} batches"
    )
    n = len(raw)
    wall_ms, floor_ms = {}, {}
    for name, step in steps.items():
        for i in range(n):  # warm up
            step(i)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            start = time.perf_counter()
            for i in range(n):
                step(i)
            wall = time.perf_counter() - start
        ops = prof.key_averages()
        total, products = per_step_ms(ops, n), per_step_ms(ops, n, MATRIX_PRODUCTS)
        print(
            f"{name}: {1e3 * wall / n:.0f} ms a step (profiled); CPU {total:.0f} ms, matrix "
            f"products {products:.0f} ms ({products / total:.0%}), "
            f"the rest {total - products:.0f} ms"
        )
        wall_ms[name] = 1e3 * wall / n
        floor_ms[name] = products + per_step_ms(ops, n, FUSED_ATTENTION)
        top = sorted(ops, key=lambda op: -op.self_cpu_time_total)[:10]
        print(
            "  largest:",
            ", ".join(f"{op.key} {op.self_cpu_time_total / 1e3 / n:.0f}" for op in top),
        )

    ceiling = wall_ms["HF Marian"] / floor_ms["aiayn"]
    print(
        f"if everything but its matrix products and fused attention took no time, aiayn's step "
        f"would be {floor_ms['aiayn']:.0f} ms: {ceiling:.2f}x HF Marian's"
    )
    like = (f"aiayn {args.precision}", f"HF Marian {args.precision}")
    bar = next(ratio for ours, theirs, ratio in BARS if (ours, theirs) == like)
    budget = wall_ms["HF Marian"] / bar
    print(
        f"{bar}x HF Marian's speed allows aiayn {budget:.0f} ms a step: "
        f"{budget - floor_ms['aiayn']:.0f} ms beyond its products and fused attention, for work "
        f"that takes {wall_ms['aiayn'] - floor_ms['aiayn']:.0f} ms now"
    )


if __name__ == "__main__":
    main()
