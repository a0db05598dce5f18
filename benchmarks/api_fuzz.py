"""The long run of the API fuzzer (`harness/api_fuzz.py`) on a trained model, in process.

    .venv/bin/python benchmarks/api_fuzz.py --model runs/demo [--examples 5000] [--seed 1]

`--examples` per operation and kind (valid, schema-breaking); the server keeps its default
limits. Reported: requests, answers by status, server errors, schema violations (the first few
in words), with the CPU; the exit status is 1 when any server error or violation was found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.api_fuzz import fuzz
from harness.machine import cpu_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--examples", type=int, default=5000, help="per operation and kind")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from aiayn.serve.app import create_app

    start = time.monotonic()
    report = fuzz(create_app(args.model), args.examples, args.seed)
    summary = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "model": str(args.model),
        "examples": args.examples,
        "seed": args.seed,
        "seconds": round(time.monotonic() - start),
        "requests": report.requests,
        "statuses": dict(sorted(report.statuses.items())),
        "server_errors": report.server_errors,
        "schema_violations": report.violations,
    }
    print(json.dumps(summary, indent=2))
    for failure in report.failures[:5]:
        print(f"\n{failure}")
    sys.exit(int(bool(report.server_errors or report.failures)))


if __name__ == "__main__":
    main()
