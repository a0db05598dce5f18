"""Serving latency and throughput on loopback: 1 client and 64 clients, per precision.

    .venv/bin/python benchmarks/serve_bench.py --model runs/demo [--precisions fp32 int8]
        [--compiled int8 bf16] [--clients 64] [--seconds 30] [--data data/en-de]

For each precision, `aiayn serve --precision P` starts in a child process. One client sends
20-word validation sentences (18-22 words) one request at a time: the latency a person typing
sees. Then 64 concurrent clients send the first 200 validation sentences. Every answer is
checked against the sentence's translation requested alone beforehand (a wrong answer counts
as one). Reported: requests/s, p50 and p99 latency, errors, wrong answers, model calls, with
the CPU model. `--compiled` adds servers started with `--compile` (their steps are compiled,
or loaded from disk, before they answer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from aiayn.data.data_dir import DataDir
from harness.live import hammer, live_server
from harness.machine import cpu_model


def answers(url: str, sentences: list[str]) -> dict[str, str]:
    """Each sentence's translation, requested alone (the reference for the load runs)."""
    return {
        s: httpx.post(f"{url}/translate", json={"text": s}, timeout=120).json()["translations"][0][
            "text"
        ]
        for s in sentences
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16", "int8"])
    parser.add_argument(
        "--compiled", nargs="*", default=[], help="precisions to serve with --compile too"
    )
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--wait-ms", default="5", help="the server's batching window")
    args = parser.parse_args()
    lines = DataDir(args.data).sources("valid")
    many = lines[: args.sentences]
    twenty = [s for s in lines if 18 <= len(s.split()) <= 22][:50]
    results = {"cpu": cpu_model(), "cores": os.cpu_count(), "load_average": os.getloadavg()[0]}
    servers = [(p, []) for p in args.precisions] + [(p, ["--compile"]) for p in args.compiled]
    for precision, compile in servers:
        options = ["--wait-ms", args.wait_ms, "--precision", precision, *compile]
        with live_server(args.model, *options, startup_s=300) as url:
            for name, sentences, clients in (
                ("1 client, 20-word sentences", twenty, 1),
                (f"{args.clients} clients", many, args.clients),
            ):
                expected = answers(url, sentences)
                calls = httpx.get(f"{url}/health").json()["batches"]
                result = asyncio.run(hammer(url, expected, clients, args.seconds))
                result["model_calls"] = httpx.get(f"{url}/health").json()["batches"] - calls
                key = " ".join([precision, *compile]) + f", {name}"
                results[key] = result
                print(f"{key}: {result}", flush=True)
    print(f"{results['cpu']}, {results['cores']} cores, load average {results['load_average']}")
    print("| precision, load | requests/s | p50 | p99 | errors | wrong | model calls |")
    print("|---|---|---|---|---|---|---|")
    for key, r in results.items():
        if isinstance(r, dict):
            print(
                f"| {key} | {r['requests_per_s']} | {r['p50_ms']} ms | {r['p99_ms']} ms | "
                f"{r['errors']} | {r['wrong']} | {r['model_calls']} |"
            )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
