"""Training throughput (target tokens/s) of the `small` preset against peers of the same size.

    .venv/bin/python benchmarks/train_bench.py [--steps 8] [--batch 128] [--length 32]

Peers, measured in the same run on the same batches: a model built on torch.nn.Transformer
(with the same embeddings, positions and tied output projection) and Hugging Face
MarianMTModel. Each does full training steps (forward, label-smoothed loss, backward, Adam) in
fp32 and under bf16 autocast. Model-FLOPs utilisation compares the model's matrix-product
FLOPs per second with a large matrix product measured here, in each precision.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.* peers

from aiayn import Transformer, preset
from aiayn.train.loss import label_smoothed_loss
from aiayn.train.trainer import precision_context
from tests.model.test_parity_marian import marian_like
from tests.model.test_parity_torch import TorchReference


def batch(cfg, n: int, length: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, cfg.vocab_size, (n, length), generator=g)
    tgt = torch.randint(3, cfg.vocab_size, (n, length + 1), generator=g)
    tgt[:, 0] = cfg.bos_id
    return src, tgt[:, :-1], tgt[:, 1:]


def make_step(forward, params, src, tgt_in, tgt_out, precision: str, loss_fn, context):
    """A closure doing one full training step; returns its seconds."""
    opt = torch.optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

    def step() -> float:
        start = time.perf_counter()
        with context(precision):
            logits = forward(src, tgt_in)
        loss = loss_fn(logits, tgt_out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return time.perf_counter() - start

    return step


def model_flops(cfg, n: int, S: int, T: int) -> float:
    """Matrix-product FLOPs of one training step (forward + backward = 3x forward)."""
    D, F_, V, L_e, L_d = (
        cfg.d_model,
        cfg.d_ff,
        cfg.vocab_size,
        cfg.n_encoder_layers,
        cfg.n_decoder_layers,
    )
    enc = L_e * (2 * n * S * (4 * D * D + 2 * D * F_) + 2 * 2 * n * S * S * D)
    dec_self = 2 * n * T * (4 * D * D) + 2 * 2 * n * T * T * D
    dec_cross = 2 * n * T * 2 * D * D + 2 * n * S * 2 * D * D + 2 * 2 * n * T * S * D
    dec = L_d * (dec_self + dec_cross + 2 * n * T * 2 * D * F_)
    out = 2 * n * T * D * V
    return 3 * (enc + dec + out)


def matmul_flops_per_s(dtype: torch.dtype, size: int = 2048, reps: int = 5) -> float:
    a = torch.randn(size, size).to(dtype)
    b = torch.randn(size, size).to(dtype)
    a @ b
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=128, help="sentences per batch")
    parser.add_argument("--length", type=int, default=32, help="tokens per sentence")
    args = parser.parse_args()
    torch.manual_seed(0)
    cfg = preset("small")
    ours = Transformer(cfg).train()
    torch_ref = TorchReference(ours).train()
    marian = marian_like(ours).train()
    src, tgt_in, tgt_out = batch(cfg, args.batch, args.length)
    tokens = int((tgt_out != cfg.pad_id).sum())

    def marian_forward(s, t):
        return marian(input_ids=s, attention_mask=s != cfg.pad_id, decoder_input_ids=t).logits

    peers = {
        "aiayn": (ours, list(ours.parameters())),
        "torch.nn.Transformer": (torch_ref, list(torch_ref.parameters())),
        "HF Marian": (marian_forward, list(marian.parameters())),
    }
    flops = model_flops(cfg, args.batch, args.length, args.length)
    peak = {"fp32": matmul_flops_per_s(torch.float32), "bf16": matmul_flops_per_s(torch.bfloat16)}

    def ours_loss(logits, target):
        return label_smoothed_loss(logits, target, 0.1, cfg.pad_id)[0]

    def peer_loss(logits, target):  # what a torch or Hugging Face user would write
        flat = logits.float().flatten(0, 1)
        return F.cross_entropy(
            flat, target.flatten(), ignore_index=cfg.pad_id, label_smoothing=0.1, reduction="sum"
        )

    def ours_context(precision):  # what `aiayn train` uses
        return precision_context(torch.device("cpu"), precision)

    def peer_context(precision):
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")

    steps = {
        f"{name} {precision}": make_step(
            forward,
            params,
            src,
            tgt_in,
            tgt_out,
            precision,
            ours_loss if name == "aiayn" else peer_loss,
            ours_context if name == "aiayn" else peer_context,
        )
        for name, (forward, params) in peers.items()
        for precision in ("fp32", "bf16")
    }
    times: dict[str, list[float]] = {k: [] for k in steps}
    for round_ in range(args.steps + 2):  # interleaved, so drift hits every entry alike
        for key, step in steps.items():
            seconds = step()
            if round_ >= 2:  # the first two warm up allocator and kernels
                times[key].append(seconds)
    results = {}
    for key, samples in times.items():
        seconds = statistics.median(samples)
        precision = key.rsplit(" ", 1)[1]
        results[key] = {
            "tokens_per_s": round(tokens / seconds),
            "mfu": round(flops / seconds / peak[precision], 3),
        }
        print(f"{key:>27}: {tokens / seconds:8,.0f} target tokens/s", flush=True)
    base = results["HF Marian fp32"]["tokens_per_s"]
    for r in results.values():
        r["vs_hf_fp32"] = round(r["tokens_per_s"] / base, 2)
    report = {
        "threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "batch": f"{args.batch} x {args.length} tokens",
        "matmul_gflops": {k: round(v / 1e9, 1) for k, v in peak.items()},
        "model_gflop_per_step": round(flops / 1e9, 1),
        "results": results,
    }
    print(json.dumps(report, indent=2))
    assert math.isfinite(base)


if __name__ == "__main__":
    main()
