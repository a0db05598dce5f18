"""The GPU report's `profile` step: where a `base` bf16 update of aiayn's own Trainer spends
its time, from torch.profiler.

Per update: kernel launches, the largest kernels by device time, the shares of matrix products,
attention and everything else, the host-device synchronisations (cudaStreamSynchronize,
cudaDeviceSynchronize, aten::item, aten::_local_scalar_dense), and the fraction of the profiled
time the device sat idle; for the Trainer as it runs now (one read of the losses per update)
and as it ran before (each batch's losses and the gradient norm read at once).

On the CPU (`--device cpu --tiny`) the same code profiles the CPU: its operators stand for the
kernels, and the idle time is the time outside any operator (Python, the data).
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "aten::item")
SYNCS += ("aten::_local_scalar_dense",)
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")
# kernel (CUDA) or operator (CPU) names by kind: the rest is elementwise, reductions, copies
MATRIX_PRODUCTS = ("gemm", "cutlass", "xmma", "nvjet", "cublas", "aten::mm", "aten::addmm")
MATRIX_PRODUCTS += ("aten::bmm", "aten::baddbmm")
ATTENTION = ("flash", "fmha", "attention")


@contextmanager
def sync_each_batch(on: bool):
    """The Trainer as it ran before (AIAYN_SYNC_EACH_BATCH=1), while the block builds it."""
    before = os.environ.pop("AIAYN_SYNC_EACH_BATCH", None)
    if on:
        os.environ["AIAYN_SYNC_EACH_BATCH"] = "1"
    try:
        yield
    finally:
        os.environ.pop("AIAYN_SYNC_EACH_BATCH", None)
        if before is not None:
            os.environ["AIAYN_SYNC_EACH_BATCH"] = before


def make_trainer(a: argparse.Namespace, name: str, cfg, max_tokens: int, per_batch: bool):
    """aiayn's Trainer on the prepared corpus, bf16, in a new run under WORK/name."""
    from aiayn.config import TrainConfig
    from aiayn.data.data_dir import DataDir
    from aiayn.train.distributed import Distributed
    from aiayn.train.run_dir import create_run
    from aiayn.train.trainer import Trainer

    root = Path(a.work) / name
    shutil.rmtree(root, ignore_errors=True)
    train_cfg = TrainConfig(precision="bf16", max_tokens=max_tokens, warmup=4000)
    run = create_run(root, DataDir.open(a.data), cfg, train_cfg)
    with sync_each_batch(per_batch):
        return Trainer(cfg, train_cfg, run, Distributed.from_env(a.device), progress=False)


def trainer_step(trainer) -> Callable[..., None]:
    """A train_speed system: one update of the Trainer on the batch's tensors, copied to the
    host once here so that each update copies them to the device as `aiayn train` does."""
    from aiayn.data.batches.dataset import Batch
    from aiayn.train.step_stats import StopFlags

    on_host: dict[int, Batch] = {}

    def step(src, tgt_in, tgt_out) -> None:
        if id(src) not in on_host:
            on_host[id(src)] = Batch(src.cpu(), tgt_in.cpu(), tgt_out.cpu())
        trainer.update([on_host[id(src)]], StopFlags())

    return step


def base_config(a: argparse.Namespace):
    """`base` (tiny with --tiny) with the prepared corpus's vocabulary, dropout on."""
    from aiayn.config import preset
    from aiayn.data.data_dir import DataDir

    vocab = DataDir.open(a.data).meta.vocab_size
    return preset("tiny" if a.tiny else "base", vocab_size=vocab, dropout=0.1)


def profile_step(a: argparse.Namespace) -> dict:
    """The Trainer's updates under torch.profiler: now (one read per update) and before."""
    from aiayn.train.step_stats import StopFlags

    device = torch.device(a.device)
    cfg, n = base_config(a), (2 if a.tiny else 4)
    out: dict = {"preset": "tiny" if a.tiny else "base", "updates": n, "device": device.type}
    for name, per_batch in (("one read per update", False), ("reads per batch", True)):
        trainer = make_trainer(a, f"profile-{per_batch}", cfg, 300 if a.tiny else 25_000, per_batch)
        stream = (batch for batch, _ in trainer.batches())
        for _ in range(1 if a.tiny else 2):  # warm up: kernels chosen, memory cached
            trainer.update([next(stream)], StopFlags())
        updates = [next(stream) for _ in range(n)]
        activities = [ProfilerActivity.CPU] + [ProfilerActivity.CUDA] * (device.type == "cuda")
        with profile(activities=activities) as prof:
            for batch in updates:
                trainer.update([batch], StopFlags())
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        out[name] = summarise(prof, n, device.type == "cuda")
    return out


def summarise(prof, n: int, cuda: bool) -> dict:
    """Per update: launches, syncs, the top kernels and the kinds' shares, idle fraction."""
    averages = prof.key_averages()
    counts = {e.key: e.count for e in averages}
    kernels = [e for e in averages if is_device(e, cuda)]
    total = sum(self_time(e, cuda) for e in kernels) or 1.0
    top = sorted(kernels, key=lambda e: self_time(e, cuda), reverse=True)[:10]
    kinds = {"matrix products": 0.0, "attention": 0.0, "other": 0.0}
    for e in kernels:
        kinds[kind(e.key)] += self_time(e, cuda) / total
    launched = sum(counts.get(k, 0) for k in LAUNCHES) if cuda else sum(e.count for e in kernels)
    return {
        "launches_per_update": round(launched / n, 1),
        "launches_are": "CUDA kernel launches" if cuda else "CPU operators",
        "syncs_per_update": {k: round(counts.get(k, 0) / n, 2) for k in SYNCS},
        "device_ms_per_update": round(total / 1e3 / n, 2),
        "shares": {k: round(v, 3) for k, v in kinds.items()},
        "top": [
            {"name": e.key[:90], "ms_per_update": round(self_time(e, cuda) / 1e3 / n, 3)}
            for e in top
        ],
        "idle_fraction": idle_fraction(prof.events(), cuda),
    }


def is_device(event, cuda: bool) -> bool:
    """A CUDA kernel (on a GPU), or an aten operator (on a CPU)."""
    if cuda:
        return str(event.device_type).endswith("CUDA") and self_time(event, cuda) > 0
    return event.key.startswith("aten::")


def self_time(event, cuda: bool) -> float:
    """Microseconds the event itself ran on the device (CPU: its own CPU time)."""
    if not cuda:
        return event.self_cpu_time_total
    return getattr(event, "self_device_time_total", None) or event.self_cuda_time_total


def kind(name: str) -> str:
    lowered = name.lower()
    if any(k in lowered for k in ATTENTION):
        return "attention"
    return "matrix products" if any(k in lowered for k in MATRIX_PRODUCTS) else "other"


def idle_fraction(events, cuda: bool) -> float:
    """1 - (time covered by kernels, or by CPU operators) / (the profiled span)."""
    spans = [(e.time_range.start, e.time_range.end) for e in events]
    busy = sorted(
        (e.time_range.start, e.time_range.end)
        for e in events
        if (str(e.device_type).endswith("CUDA") if cuda else e.name.startswith("aten::"))
    )
    if not spans or not busy:
        return 1.0
    covered, end = 0.0, -float("inf")
    for start, stop in busy:  # the union of the intervals
        if stop > end:
            covered += stop - max(start, end)
            end = stop
    span = max(s for _, s in spans) - min(s for s, _ in spans)
    return round(max(0.0, 1 - covered / span), 4) if span > 0 else 1.0
