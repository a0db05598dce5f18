"""The whole greedy search compiled (`decode.greedy_loop`) against the step by step search over
the same compiled step: a student's shape (3+1, d 256, 8,000 pieces) and the teacher's (3+3),
random weights, int8 `--compile` over a cut of 1,000 pieces, batch 1, every sentence made to
decode 40 steps (eos barred until the limit), so both do the same work.

    .venv/bin/python experiments/decode_compile/whole_loop.py [--threads 1]

Prints, per model, ms a sentence (encoder included) of each search, taking turns, median
(min-max) of 7 rounds of 20 sentences, and whether their outputs agree.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import tempfile
import time

import torch

from aiayn.config import DecodeConfig, preset
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.greedy import most_probable, walked
from aiayn.decode.shortlisted import ShortlistModel, cut, output_rows
from aiayn.decode.token_by_token import token_by_token
from aiayn.model import Transformer

STEPS, PIECES, SOURCE, SENTENCES, ROUNDS = 40, 1000, 30, 20, 7
CFG = DecodeConfig(beam=1, max_len_a=0.0, max_len_b=STEPS, min_len=STEPS - 1)


def shortlisted(model: CompiledModel) -> ShortlistModel:
    V, eos = model.cfg.vocab_size, model.cfg.eos_id
    vocab = torch.cat([torch.tensor([eos]), torch.randperm(V - 4)[: PIECES - 1] + 4]).sort()[0]
    own = torch.ones(1, PIECES, dtype=torch.bool)
    return ShortlistModel(model, model.model, cut(output_rows(model.model), vocab), vocab, own)


def cpu() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if "Model name" in ln), "")


def measure(decoders: int) -> None:
    torch.manual_seed(0)
    base = Transformer(preset("small", n_decoder_layers=decoders)).eval()
    model = CompiledModel.from_float(base, "int8", cache_dir=tempfile.mkdtemp())
    short = shortlisted(model)
    sources = torch.randint(4, model.cfg.vocab_size, (SENTENCES, SOURCE))
    sources[:, -1] = model.cfg.eos_id
    with torch.inference_mode():
        systems = {
            "whole loop": lambda s: walked(short, s, CFG).tokens,
            "step by step": lambda s: token_by_token(short, s, most_probable, CFG).tokens,
        }
        outputs = {name: run(sources[:1]) for name, run in systems.items()}  # compiles both
        agree = len(set(map(str, outputs.values()))) == 1
        times: dict[str, list[float]] = {name: [] for name in systems}
        for _ in range(ROUNDS):
            for name, run in systems.items():
                start = time.perf_counter()
                for i in range(SENTENCES):
                    run(sources[i : i + 1])
                times[name].append((time.perf_counter() - start) / SENTENCES * 1e3)
    print(f"3+{decoders}, outputs agree: {agree}")
    for name, ms in times.items():
        print(
            f"  {name}: {statistics.median(ms):.2f} ms a sentence ({min(ms):.2f}-{max(ms):.2f}), "
            f"{STEPS / statistics.median(ms) * 1e3:,.0f} steps/s"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    print(f"{cpu()}, {platform.machine()}, torch {torch.__version__}, {a.threads} thread(s)")
    for decoders in (1, 3):
        measure(decoders)


if __name__ == "__main__":
    main()
