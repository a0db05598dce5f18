"""Training throughput on real batches: aiayn against torch.nn.Transformer and Hugging Face Marian.

    .venv/bin/python benchmarks/train_bench.py [--data data/en-de] [--batches 12] [--repeats 5]
        [--preset small] [--max-tokens 4096] [--peer-loss theirs|ours] [--systems aiayn ...]
        [--json FILE]

Every system replays the same sequence of real batches - `TokenBatchSampler` over a prepared
corpus (`aiayn prepare --out data/en-de` makes the default, the Bible) - in fp32 and under bf16
autocast, doing full training steps (forward, loss, backward, optimizer):
- aiayn: its own `Trainer.update` (the code `aiayn train` runs: lengths padded to a multiple of
  `pad_to`, the projection and loss on real target positions only, fused Adam);
- torch.nn.Transformer with the embeddings, sinusoids and dropout ours has, Adam;
- Hugging Face `MarianMTModel` with its default attention implementation, AdamW.
Peers get the batches unrounded, as their users' collators give them, and by default the loss
their users write (`F.cross_entropy` with label smoothing 0.1, padding ignored; `--peer-loss
ours` gives them aiayn's). Systems are interleaved: each repeat runs every system over all the
batches in turn, so drift on a shared machine hits all alike; a first round warms up and is not
counted. All systems share one process and so one memory allocator: tcmalloc where installed,
as `aiayn train` runs (the script restarts itself with it preloaded, as `aiayn train` does;
`AIAYN_ALLOCATOR=system` keeps glibc's malloc and aiayn's heap trim). Throughput = real target
tokens / seconds, median and min-max over the repeats. MFU
compares the model's matrix-product FLOPs per second with a large matrix product measured here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from aiayn.config import TrainConfig, preset
from aiayn.data.batches.dataset import Batch, ParallelData
from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.data_dir import DataMeta
from aiayn.train.distributed import Distributed
from aiayn.train.host_memory import allocator, restart_with_tcmalloc
from aiayn.train.loss import label_smoothed_loss
from aiayn.train.run_dir import create_run
from aiayn.train.step_stats import StopFlags
from aiayn.train.trainer import Trainer
from harness.machine import cpu_model
from harness.peers import TorchTransformer, hf_marian

PRECISIONS = ("fp32", "bf16")
SYSTEMS = ("aiayn", "torch", "marian")  # aiayn's Trainer, torch.nn.Transformer, HF Marian
# The training issue's bars, median against median in one run: (aiayn system, HF system, ratio).
BARS = (
    ("aiayn bf16", "HF Marian bf16", 2.0),
    ("aiayn bf16", "HF Marian fp32", 3.0),
    ("aiayn fp32", "HF Marian fp32", 1.3),
)
Step = Callable[[int], int]  # batch number -> real target tokens of the step


def aiayn_step(data_dir: Path, indices, cfg, precision: str, max_tokens: int, work: Path) -> Step:
    """aiayn's own training update, as `aiayn train` runs it, on its own padding of the batches."""
    train_cfg = TrainConfig(max_tokens=max_tokens, precision=precision, warmup=4000)
    run = create_run(work / f"aiayn-{precision}", data_dir, cfg, train_cfg)
    trainer = Trainer(cfg, train_cfg, run, Distributed.from_env("cpu"), progress=False)
    data = trainer.train_data
    batches: list[Batch] = [data.collate(ix, train_cfg.pad_to) for ix in indices]

    def step(i: int) -> int:
        trainer.update([batches[i]], StopFlags())
        return batches[i].n_tgt_tokens

    return step


def peer_step(model, forward, optimizer, precision: str, loss_name: str, pad_id: int, batches):
    """A plain PyTorch training step, as a torch or Hugging Face user writes it."""

    def loss_fn(logits, target):
        if loss_name == "ours":
            return label_smoothed_loss(logits, target, 0.1, pad_id)[0]
        flat = logits.flatten(0, 1)  # (B*T, V)
        return F.cross_entropy(
            flat, target.flatten(), ignore_index=pad_id, label_smoothing=0.1, reduction="sum"
        )

    def step(i: int) -> int:
        batch = batches[i]
        model.train()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = forward(batch.src, batch.tgt_in)  # (B, T, V)
        n = batch.n_tgt_tokens
        (loss_fn(logits, batch.tgt_out) / n).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return n

    return step


def real_batches(data_dir: Path, preset_name: str, n: int, max_tokens: int):
    """The model config, and the first `n` batches of `TokenBatchSampler` over the prepared
    training split: their indices (aiayn collates them itself) and as a peer's collator pads
    them. Exits with what to run when the corpus is not prepared."""
    if not (data_dir / "meta.json").is_file():
        sys.exit(f"{data_dir}: no prepared data; run `aiayn prepare --out {data_dir}` first")
    torch.manual_seed(0)
    cfg = preset(preset_name, vocab_size=DataMeta.load(data_dir).vocab_size)
    data = ParallelData(data_dir, "train")
    sampler = TokenBatchSampler(data.src_lengths, data.tgt_lengths, max_tokens, seed=1)
    indices = [ix for _, ix in zip(range(n), sampler, strict=False)]
    return cfg, indices, [data.collate(ix) for ix in indices]


def marian_step(cfg, precision: str, loss_name: str, batches) -> Step:
    """Hugging Face `MarianMTModel` of the same size (its default attention), AdamW."""
    torch.manual_seed(0)
    marian = hf_marian(cfg)

    def forward(src, tgt_in):
        mask = src != cfg.pad_id
        return marian(input_ids=src, attention_mask=mask, decoder_input_ids=tgt_in).logits

    opt = torch.optim.AdamW(marian.parameters(), lr=1e-4, betas=(0.9, 0.98))
    return peer_step(marian, forward, opt, precision, loss_name, cfg.pad_id, batches)


def model_flops(cfg, src_tokens: int, tgt_tokens: int, pairs_st: int, pairs_tt: int) -> float:
    """Matrix-product FLOPs of one training step (forward + backward = 3x forward), counted on
    the padded batch: projections per token, attention per (query, key) pair."""
    D, F_, V = cfg.d_model, cfg.d_ff, cfg.vocab_size
    enc = cfg.n_encoder_layers * (2 * src_tokens * (4 * D * D + 2 * D * F_) + 4 * pairs_st * D)
    per_token = 2 * tgt_tokens * (6 * D * D + 2 * D * F_)  # self q,k,v,o; cross q,o; FFN
    cross_kv = 2 * src_tokens * 2 * D * D
    dec = cfg.n_decoder_layers * (per_token + cross_kv + 4 * pairs_tt * D + 4 * pairs_st * D)
    return 3 * (enc + dec + 2 * tgt_tokens * D * V)


def matmul_flops_per_s(dtype: torch.dtype, size: int = 2048, reps: int = 5) -> float:
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    a @ b
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--batches", type=int, default=12, help="real batches per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--preset", default="small")
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--peer-loss", choices=("theirs", "ours"), default="theirs")
    parser.add_argument(
        "--systems",
        nargs="+",
        choices=SYSTEMS,
        default=list(SYSTEMS),
        help="some only (a CPU whose bf16 crawls: aiayn alone)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    restart_with_tcmalloc(sys.orig_argv)  # the allocator `aiayn train` runs on, for every system
    cfg, indices, raw = real_batches(args.data, args.preset, args.batches, args.max_tokens)

    steps: dict[str, Step] = {}
    work = Path(tempfile.mkdtemp(prefix="train-bench-"))
    for precision in PRECISIONS if "aiayn" in args.systems else ():
        steps[f"aiayn {precision}"] = aiayn_step(
            args.data, indices, cfg, precision, args.max_tokens, work
        )
    for precision in PRECISIONS if "torch" in args.systems else ():
        torch.manual_seed(0)
        ref = TorchTransformer(cfg)
        opt = torch.optim.Adam(ref.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        steps[f"torch.nn.Transformer {precision}"] = peer_step(
            ref, ref, opt, precision, args.peer_loss, cfg.pad_id, raw
        )
    for precision in PRECISIONS if "marian" in args.systems else ():
        steps[f"HF Marian {precision}"] = marian_step(cfg, precision, args.peer_loss, raw)

    rates: dict[str, list[float]] = {name: [] for name in steps}
    for repeat in range(args.repeats + 1):  # round 0 warms up
        for name, step in steps.items():
            start, tokens = time.perf_counter(), 0
            for i in range(len(raw)):
                tokens += step(i)
            if repeat:
                rates[name].append(tokens / (time.perf_counter() - start))
        if repeat:
            print(f"repeat {repeat}/{args.repeats} done", file=sys.stderr, flush=True)

    peak = {"fp32": matmul_flops_per_s(torch.float32), "bf16": matmul_flops_per_s(torch.bfloat16)}
    real_tokens = sum(b.n_tgt_tokens for b in raw)
    flops = 0.0
    for b in raw:
        (B, S), T = b.src.shape, b.tgt_in.shape[1]
        flops += model_flops(cfg, B * S, B * T, B * T * S, B * T * T)
    results = {}
    for name, samples in rates.items():
        precision = name.rsplit(" ", 1)[1]
        median = statistics.median(samples)
        results[name] = {
            "tokens_per_s": round(median),
            "min": round(min(samples)),
            "max": round(max(samples)),
            "mfu": round(flops / (real_tokens / median) / peak[precision], 3),
        }
    report = {
        "cpu": cpu_model(),
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "threads": torch.get_num_threads(),
        "allocator": allocator(),
        "data": str(args.data),
        "batches": len(raw),
        "real_target_tokens_per_repeat": real_tokens,
        "repeats": args.repeats,
        "peer_loss": args.peer_loss,
        "matmul_gflops": {k: round(v / 1e9, 1) for k, v in peak.items()},
        "results": results,
    }
    head = f"CPU: {report['cpu']}; torch {report['torch']}, {report['threads']} threads"
    head += f", {report['allocator']} allocator"
    print(f"{head}; {len(raw)} batches ({real_tokens:,} target tokens) x {args.repeats} repeats")
    against = [f"HF Marian {p}" for p in PRECISIONS] if "marian" in args.systems else []
    print(f"{'system':>26} | tokens/s median (min-max) | MFU  | " + " | ".join(against))
    for name, r in results.items():
        vs = [f"{r['tokens_per_s'] / results[a]['tokens_per_s']:.2f}x" for a in against]
        print(
            f"{name:>26} | {r['tokens_per_s']:>7,} ({r['min']:,}-{r['max']:,}) | "
            f"{r['mfu']:.2f} | " + " | ".join(vs)
        )
    for ours, theirs, bar in [b for b in BARS if {b[0], b[1]} <= results.keys()]:
        ratio = results[ours]["tokens_per_s"] / results[theirs]["tokens_per_s"]
        met = "met" if ratio >= bar else "not met"
        print(f"{ours} / {theirs}: {ratio:.2f}x (bar {bar}x: {met})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
