"""What the repetition guards cost a search: beam 4 over the first `--lines` source lines of a
split, with no guard, the stutter guard, the n-gram ban, and both; the four interleaved (the
order rotates each round), `--repeats` rounds, output tokens per second (each guard changes
the outputs, so tokens/s, not seconds, compares like with like).

    .venv/bin/python benchmarks/guard_bench.py --model runs/gettext --data runs/gettext-data \
        --lines 300 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.machine import cpu_model

GUARDS = {"none": (0, 0), "stutter guard 3": (0, 3), "no repeated 3-gram": (3, 0), "both": (3, 3)}


def main() -> int:
    import torch

    from aiayn import DecodeConfig, open_translator
    from aiayn.data.data_dir import DataDir

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="valid")
    ap.add_argument("--lines", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    lines = DataDir.open(args.data).sources(args.split)[: args.lines]
    translator = open_translator(args.model)
    base = translator.default_search.replace(no_repeat_ngram=0, stutter_guard=0)
    print(f"{cpu_model()}, {args.threads} threads, {len(lines)} lines, {base.beam}-beam")
    translator.translate(lines[:20], base)  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in GUARDS}
    for r in range(args.repeats):
        names = list(GUARDS)[r % len(GUARDS) :] + list(GUARDS)[: r % len(GUARDS)]
        for name in names:
            n, s = GUARDS[name]
            cfg: DecodeConfig = base.replace(no_repeat_ngram=n, stutter_guard=s)
            started = time.perf_counter()
            found = translator.translate(lines, cfg)
            took = time.perf_counter() - started
            tokens = sum(map(len, translator.tokenizer.encode(found))) + len(found)  # with eos
            rates[name].append(tokens / took)
            print(f"round {r + 1}: {name:20} {tokens / took:8.1f} tokens/s", flush=True)
    summary = {
        name: {"median": statistics.median(v), "min": min(v), "max": max(v)}
        for name, v in rates.items()
    }
    none = summary["none"]["median"]
    for name, got in summary.items():
        print(
            f"{name:20} {got['median']:8.1f} tokens/s ({got['min']:.1f}-{got['max']:.1f}), "
            f"{got['median'] / none:.3f}x no guard"
        )
    if args.out:
        args.out.write_text(json.dumps({"cpu": cpu_model(), **summary}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
