"""Serving throughput and latency, with dynamic batching and without, on loopback.

    .venv/bin/python benchmarks/serve_bench.py --model runs/demo [--clients 64] [--seconds 30]

64 concurrent clients send validation sentences one per request for a fixed time; every
answer is checked against the sentence's translation requested alone beforehand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serve.live import hammer, live_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--sentences", type=int, default=200)
    args = parser.parse_args()
    lines = (args.data / "valid.src.txt").read_text(encoding="utf-8").splitlines()
    sentences = lines[: args.sentences]
    results = {"cpus": os.cpu_count(), "clients": args.clients}
    for name, wait in (("batched (5 ms window)", "5"), ("unbatched", "0")):
        with live_server(args.model, "--wait-ms", wait) as url:
            expected = {
                s: httpx.post(f"{url}/translate", json={"text": s}, timeout=120).json()[
                    "translations"][0]["text"]
                for s in sentences
            }  # fmt: skip
            result = asyncio.run(hammer(url, expected, args.clients, args.seconds))
            result["model_calls"] = httpx.get(f"{url}/health").json()["batches"] - len(sentences)
        results[name] = result
        print(name, result, flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
