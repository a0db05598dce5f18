"""Time and peak memory of `aiayn prepare`: the default corpus, and a large synthetic one.

    .venv/bin/python benchmarks/prepare_bench.py [--pairs 2000000] [--skip-bible]
    .venv/bin/python benchmarks/prepare_bench.py --langs all     # the multilingual Bible only

Peak memory is the largest proportional set size (PSS: shared pages split between the processes
that share them) summed over the process tree (the main process and its encoding workers),
sampled every 50 ms from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def tree_pss(pid: int) -> int:
    """Proportional resident bytes of a process and all its descendants."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                pss = next(line for line in f if line.startswith("Pss:"))
                total += int(pss.split()[1]) * 1024
            with open(f"/proc/{p}/task/{p}/children") as f:
                stack.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def run_measured(cmd: list[str]) -> dict:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0

    def sample() -> None:
        nonlocal peak
        while proc.poll() is None:
            peak = max(peak, tree_pss(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    output, _ = proc.communicate()
    sampler.join()
    if proc.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{output}")
    return {"seconds": round(time.perf_counter() - started, 1), "peak_pss_mb": peak >> 20}


def synthetic_corpus(path: Path, n_pairs: int, seed: int = 0) -> None:
    """Zipf-distributed made-up words; the target maps each word to another, reorders a little."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    n_words = 20_000
    src_words = ["".join(rng.choice(letters, rng.integers(2, 10))) for _ in range(n_words)]
    tgt_words = ["".join(rng.choice(letters, rng.integers(2, 11))) for _ in range(n_words)]
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, n_pairs, 100_000):
            n = min(100_000, n_pairs - start)
            lengths = rng.integers(3, 40, n)
            ids = np.minimum(rng.zipf(1.2, int(lengths.sum())) - 1, n_words - 1)
            for sentence in np.split(ids, np.cumsum(lengths)[:-1]):
                src = " ".join(src_words[i] for i in sentence)
                tgt = " ".join(tgt_words[i] for i in sentence[::-1])
                f.write(f"{src}\t{tgt}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2_000_000)
    parser.add_argument("--skip-bible", action="store_true")
    parser.add_argument("--langs", help="measure `prepare --langs LANGS` (and nothing else)")
    args = parser.parse_args()
    aiayn = [sys.executable, "-m", "aiayn", "prepare", "--no-progress"]
    results = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.langs:
            out = tmp / "multi"
            results["langs_" + args.langs] = run_measured(
                [*aiayn, "--langs", args.langs, "--out", str(out)]
            )
            print((out / "report.txt").read_text(encoding="utf-8").splitlines()[-1])
            print(json.dumps(results, indent=2))
            return
        if not args.skip_bible:
            results["bible_en_de"] = run_measured([*aiayn, "--out", str(tmp / "bible")])
            print("bible:", results["bible_en_de"], flush=True)
        corpus = tmp / "synthetic.tsv"
        t = time.perf_counter()
        synthetic_corpus(corpus, args.pairs)
        print(f"made {args.pairs:,} synthetic pairs in {time.perf_counter() - t:.0f} s", flush=True)
        results[f"synthetic_{args.pairs}"] = {
            "corpus_mb": corpus.stat().st_size >> 20,
            **run_measured([*aiayn, "--corpus", str(corpus), "--out", str(tmp / "synthetic")]),
        }
        report = (tmp / "synthetic" / "report.txt").read_text()
        print(report)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
