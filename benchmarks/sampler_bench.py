"""What building an epoch of training batches costs: bilingual (the en-de data, to compare a
checkout before and after a change), multilingual (temperature-sampled directions) and with case
augmentation (a fraction of the pairs upper- or title-cased and re-encoded each epoch).

    flock /work/heavy.lock python benchmarks/sampler_bench.py --data data/en-de --repeats 5
    flock /work/heavy.lock python benchmarks/sampler_bench.py --data data/en-de --case 0.1,0.2

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

from aiayn.data.batches.dataset import ParallelData
from aiayn.data.batches.sampler import TokenBatchSampler


def seconds(make, repeats: int) -> dict[str, float]:
    """Median, min and max seconds of `make()` (a sampler: built, then its epoch 1 batched),
    and the median CPU seconds of the process (less moved by other jobs on a shared machine)."""
    times, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        make().epoch_batches(1)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "cpu_median": statistics.median(cpu),
    }


def case_augmented(data: str, fraction: float, max_tokens: int, repeats: int) -> dict:
    """An epoch with `fraction` of the pairs cased: the casing, re-encoding and batching (a
    fresh CaseAugment each time, so nothing is cached), and the epoch's pieces."""
    from aiayn.data.batches.case_augment import CaseAugment
    from aiayn.data.data_dir import DataDir
    from aiayn.data.tokenizer import Tokenizer

    files, train = DataDir.open(data), ParallelData(data, "train")
    lengths = (train.src_lengths, train.tgt_lengths)
    texts = (files.text("train", "src"), files.text("train", "tgt"))
    tokenizer = Tokenizer(files.tokenizer)

    def make() -> TokenBatchSampler:
        augment = CaseAugment(fraction, 1, texts, tokenizer, lengths, max_tokens, 8)
        return TokenBatchSampler(*lengths, max_tokens, seed=1, pad_to=8, epoch_lengths=augment)

    found = seconds(make, repeats)
    sampler = make()
    src, tgt = sampler.epoch_lengths.lengths(1)
    found["pieces"] = int(src.sum() + tgt.sum())
    found["batches"] = len(sampler.epoch_batches(1))
    return found


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
    parser.add_argument("--case", help="with --data: case_augment fractions, e.g. 0.1,0.2")
    args = parser.parse_args()
    found = {}
    if args.data:
        train = ParallelData(args.data, "train")
        src, tgt = train.src_lengths, train.tgt_lengths
        found["bilingual"] = seconds(
            lambda: TokenBatchSampler(src, tgt, args.max_tokens, seed=1, pad_to=8), args.repeats
        )
        found["bilingual_pairs"] = len(src)
        found["bilingual_pieces"] = int(src.sum() + tgt.sum())
        plain = TokenBatchSampler(src, tgt, args.max_tokens, seed=1, pad_to=8)
        found["bilingual_batches"] = len(plain.epoch_batches(1))
        for fraction in map(float, args.case.split(",") if args.case else []):
            found[f"case_augment={fraction}"] = case_augmented(
                args.data, fraction, args.max_tokens, args.repeats
            )
    if args.multilingual:
        from aiayn.data.batches.directions import TemperatureBatchSampler

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
