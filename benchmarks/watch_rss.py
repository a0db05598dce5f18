"""Run a command and sample its resident memory every few seconds.

    .venv/bin/python benchmarks/watch_rss.py LOG [--every 2] -- aiayn train --data data/en-de ...

Writes "seconds MiB" lines to LOG (the command's stderr to LOG.err, its stdout discarded) and,
when the command ends, prints the median, 99th percentile and highest sample, and the peak
resident memory the kernel recorded for the process (which also catches peaks between samples).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def rss_mb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    line = next((s for s in status.splitlines() if s.startswith("VmRSS:")), None)
    return int(line.split()[1]) // 1024 if line else None


def main() -> None:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between samples")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.error("give the command to run after --")
    samples: list[int] = []
    with open(args.log, "w") as log, open(f"{args.log}.err", "w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        start = time.monotonic()
        while proc.poll() is None:
            if mb := rss_mb(proc.pid):  # None once gone, 0 while starting
                samples.append(mb)
                log.write(f"{time.monotonic() - start:.0f} {mb}\n")
                log.flush()
            time.sleep(args.every)
    if samples:
        ordered = sorted(samples)
        print(
            f"{len(samples)} samples: median {statistics.median(samples):.0f} MiB, 99th percentile "
            f"{ordered[int(0.99 * (len(ordered) - 1))]} MiB, highest {ordered[-1]} MiB"
        )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024  # the one child
    print(f"exit {proc.returncode}; kernel-recorded peak: {peak} MiB")
    sys.exit(proc.returncode or 0)


if __name__ == "__main__":
    main()
