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


def timed_searches(
    nbest: Callable,
    lines: list[str],
    configs: dict[str, tuple[int, int]],
    sizes: tuple[int, int],
    search: Callable,
) -> dict[str, tuple[float, int]]:
    """One child's timings of `nbest(lines, cfg)` (a translator's): {configuration: (seconds,
    output pieces)}. A configuration is (batch, beam); `sizes` (alone, batched): batch 1
    translates the first `alone` lines one at a time, a larger batch the first `batched` in
    chunks of it; `search(beam)` gives the DecodeConfig. Each configuration is warmed up on its
    first chunk, outside the clock."""
    import time

    found = {}
    for config, (batch, beam) in configs.items():
        cfg = search(beam)
        chunks = (
            [[x] for x in lines[: sizes[0]]]
            if batch == 1
            else [lines[i : i + batch] for i in range(0, sizes[1], batch)]
        )
        nbest(chunks[0], cfg)  # warm-up
        start = time.perf_counter()
        pieces = sum(len(h[0].tokens) for c in chunks for h in nbest(c, cfg))
        found[config] = (time.perf_counter() - start, pieces)
    return found
