"""The encoder of `--compile --precision int8`: which int8 form encodes a sentence fastest.

    .venv/bin/python experiments/decode_compile/encoder_int8.py --model runs/student \
        --data data/en-de [--threads 1] [--lines 40] [--rounds 9]

The compiled step's weight-only int8 (bf16 activations, `_weight_int8pack_mm`) is the fastest
batch-1 decoder step, where a product has one row; the encoder's products have a row per source
token. Times `Transformer.encode` of the first `--lines` test sentences, one at a time, for the
model's encoder as weight-only int8 in bf16, as float32, and as dynamic int8 (`int8_encoder`),
the three taking turns for `--rounds` rounds in one process: ms per sentence, median (min-max).
Then the int8 kernel alone on one and on 30 rows, bf16 against float32 inputs, against float32
`F.linear`.
"""

from __future__ import annotations

import argparse
import copy
import platform
import statistics
import subprocess
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.precision import int8_encoder, quantize_int8_weights
from aiayn.layout import model_dir
from aiayn.model import Transformer


def cpu_model() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    names = [line.split(":", 1)[1].strip() for line in out.splitlines() if "Model name" in line]
    return names[0] if names else platform.processor()


def per_call_us(f: Callable[..., object], *args: object, n: int = 300) -> float:
    for _ in range(20):
        f(*args)
    start = time.perf_counter()
    for _ in range(n):
        f(*args)
    return (time.perf_counter() - start) / n * 1e6


def encoders(a: argparse.Namespace) -> None:
    directory = model_dir(a.model)
    base = Transformer.load(directory).eval()
    forms = {
        "weight-only int8, bf16": quantize_int8_weights(copy.deepcopy(base)),
        "float32": base,
        "dynamic int8": int8_encoder(base),
    }
    tokenizer = Tokenizer(directory)
    lines = DataDir.open(a.data).sources("test", a.lines)
    sources = [torch.tensor([[*ids, base.cfg.eos_id]]) for ids in tokenizer.encode(lines)]
    mean = statistics.mean(s.shape[1] for s in sources)
    print(f"{a.lines} test sentences of {mean:.1f} pieces on average, one at a time")
    found: dict[str, list[float]] = {name: [] for name in forms}
    with torch.inference_mode():
        for model in forms.values():  # warm-up
            for src in sources[:3]:
                model.encode(src)
        for _ in range(a.rounds):
            for name, model in forms.items():
                start = time.perf_counter()
                for src in sources:
                    model.encode(src)
                found[name].append((time.perf_counter() - start) / len(sources) * 1e3)
    for name, times in found.items():
        print(f"| {name} | {statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f}) |")


def kernels() -> None:
    print("\n| rows x in x out | int8 kernel, bf16 | int8 kernel, float32 | F.linear float32 |")
    for rows, out in ((1, 256), (1, 1024), (30, 256), (30, 1024)):
        weight = torch.randint(-127, 127, (out, 256), dtype=torch.int8)
        times = []
        for dtype in (torch.bfloat16, torch.float32):
            x = torch.randn(rows, 256, dtype=dtype)
            scale = torch.rand(out, dtype=dtype)
            times.append(per_call_us(torch._weight_int8pack_mm, x, weight, scale))
        x = torch.randn(rows, 256)
        dense = weight.float()
        times.append(per_call_us(F.linear, x, dense))
        print(f"| {rows} x 256 x {out} | " + " | ".join(f"{t:,.1f} us" for t in times) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a run or model directory")
    p.add_argument("--data", required=True, help="prepared data: its test split")
    p.add_argument("--threads", type=int, default=1, help="PyTorch's threads")
    p.add_argument("--lines", type=int, default=40)
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    print(f"{cpu_model()}, torch {torch.__version__}, {a.threads} thread(s); ms per sentence")
    encoders(a)
    kernels()


if __name__ == "__main__":
    main()
