"""What the server's time budget costs a search that has none: the deadline check once per
output step, against the same search with the check replaced by nothing, interleaved in one
process; and the check's own cost per call.

    .venv/bin/python experiments/deadline_overhead/deadline_overhead.py --model runs/demo \
        [--data data/en-de] [--sentences 60] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: harness/

import aiayn.decode.beam as beam
import aiayn.decode.token_by_token as token_by_token
from aiayn.data.data_dir import DataDir
from aiayn.decode.rules import check_deadline
from aiayn.engines import open_translator
from harness.machine import cpu_model


def nothing(deadline: float, t: int) -> None:
    """The check removed."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--sentences", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    translator = open_translator(args.model)
    lines = DataDir(args.data).sources("test")[: args.sentences]
    cfg = translator.default_search
    translator.nbest(lines[:8], cfg)  # warm
    seconds: dict[str, list[float]] = {"with the check": [], "without": []}
    variants = [("with the check", check_deadline), ("without", nothing)]
    for i in range(args.repeats):
        for name, check in variants if i % 2 == 0 else variants[::-1]:
            beam.check_deadline = token_by_token.check_deadline = check  # type: ignore[assignment]
            start = time.perf_counter()
            translator.nbest(lines, cfg)
            seconds[name].append(time.perf_counter() - start)
    print(f"{cpu_model()}; {len(lines)} sentences, beam {cfg.beam}, {args.repeats} repeats")
    for name, values in seconds.items():
        print(
            f"{name}: median {statistics.median(values):.3f} s "
            f"(min {min(values):.3f}, max {max(values):.3f}): {[round(v, 3) for v in values]}"
        )
    n = 1_000_000
    for name, check in variants:
        ns = timeit.timeit(lambda c=check: c(0.0, 5), number=n) / n * 1e9
        print(f"one call {name}: {ns:.0f} ns")


if __name__ == "__main__":
    main()
