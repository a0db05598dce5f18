"""Systems timed against each other as benchmarks/README.md's rules ask: each timing in a fresh
child process, the systems taking turns (the order rotates each round), the 1-minute load
average noted before each round; a table cell is the median and the range."""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable

# one child's timings: {configuration: (seconds, output pieces)}
Timed = Callable[[str], dict[str, tuple[float, int]]]


def interleaved(systems: list[str], repeats: int, timed: Timed) -> dict:
    """{"pieces_per_s": {system: {configuration: [per round]}}, "load_average_1min": [...]}."""
    speed: dict[str, dict[str, list[float]]] = {s: {} for s in systems}
    loads = []
    for r in range(repeats):
        loads.append(os.getloadavg()[0])
        for system in systems[r % len(systems) :] + systems[: r % len(systems)]:
            for config, (seconds, pieces) in timed(system).items():
                speed[system].setdefault(config, []).append(pieces / seconds)
            print(f"round {r + 1}/{repeats} {system}: done", file=sys.stderr, flush=True)
    return {"pieces_per_s": speed, "load_average_1min": loads}


def cell(values: list[float]) -> str:
    """'median (min-max)', thousands separated."""
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"
