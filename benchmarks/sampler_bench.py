"""What building an epoch of training batches costs: bilingual (the en-de data, to compare a
checkout before and after a change) and multilingual (temperature-sampled directions).

    flock /work/heavy.lock python benchmarks/sampler_bench.py --data data/en-de --repeats 5

Run it with PYTHONPATH pointing at each checkout to compare them; `--multilingual` also times
the temperature sampler on synthetic lengths of 14 directions (an English-centric model of 8
languages) against a bilingual sampler on the same pairs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from aiayn.data.batching import TokenBatchSampler
from aiayn.data.dataset import ParallelData


def seconds(make, repeats: int) -> dict[str, float]:
    """Median, min and max seconds of `make()` (a sampler: built, then its epoch 1 batched)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        make().epoch_batches(1)
        times.append(time.perf_counter() - started)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def synthetic(n_directions: int, pairs: int, seed: int = 0):
    """Lengths like the Bible's (pieces: 5-80) and directions of varied sizes."""
    rng = np.random.default_rng(seed)
    sizes = (pairs * rng.uniform(0.3, 1.0, n_directions)).astype(int)
    directions = np.repeat(np.arange(n_directions), sizes)
    src = rng.integers(5, 80, len(directions))
    tgt = np.clip(src + rng.integers(-10, 10, len(directions)), 3, 90)
    return src, tgt, directions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="a bilingual data directory")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--multilingual", action="store_true")
    args = parser.parse_args()
    found = {}
    if args.data:
        train = ParallelData(args.data, "train")
        src, tgt = train.src_lengths, train.tgt_lengths
        found["bilingual"] = seconds(
            lambda: TokenBatchSampler(src, tgt, args.max_tokens, seed=1, pad_to=8), args.repeats
        )
        found["bilingual_pairs"] = len(src)
    if args.multilingual:
        from aiayn.data.direction_sampling import TemperatureBatchSampler

        src, tgt, dirs = synthetic(14, 31_000)
        found["multilingual_pairs"] = len(src)
        found["same pairs, bilingual sampler"] = seconds(
            lambda: TokenBatchSampler(src, tgt, args.max_tokens, seed=1, pad_to=8), args.repeats
        )
        found["multilingual, T=5"] = seconds(
            lambda: TemperatureBatchSampler(
                src, tgt, dirs, 14, args.max_tokens, 5.0, seed=1, pad_to=8
            ),
            args.repeats,
        )
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
