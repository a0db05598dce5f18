"""A live server on loopback and a bounded load driver.

`benchmarks/serve_bench.py` and `benchmarks/soak.py` measure with them, `docs/make_screenshots.py`
photographs the page, and the slow tests in `tests/serve/test_live.py` run a load and the page
in Chromium.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import httpx

# Headless Chromium on a machine with no outside network (Debian's chromium, run as root).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_server(model: Path, *extra: str, startup_s: float = 60.0, log: Path | None = None):
    """`aiayn serve` in a child process on a free loopback port; yields its base URL once it
    answers (at most `startup_s` after the start). The server's stderr (its log, a traceback
    behind a 500) goes to `log`, or to a temporary file: never to a pipe nobody reads."""
    port = free_port()
    with open(log, "w+b") if log else tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "aiayn",
                "serve",
                "--model",
                str(model),
                "--port",
                str(port),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + startup_s
            while True:
                try:
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    stderr.seek(0)
                    raise RuntimeError(f"server did not start: {stderr.read().decode()}")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            proc.wait(10)


async def hammer(
    url: str, expected: dict[str, str], clients: int, seconds: float, max_requests: int = 1_000_000
) -> dict:
    """`clients` concurrent clients send sentences for `seconds` (and at most max_requests);
    every answer is checked against `expected`. Only loopback addresses are ever used."""
    assert url.startswith("http://127.0.0.1:"), "load tests target loopback only"
    sentences = list(expected)
    latencies: list[float] = []
    errors: Counter[str] = Counter()  # each error: an HTTP status with its detail, or an exception
    wrong = 0
    stop = time.monotonic() + seconds

    async def client(i: int, http: httpx.AsyncClient) -> None:
        nonlocal wrong
        n = i
        while time.monotonic() < stop and len(latencies) + errors.total() < max_requests:
            text = sentences[n % len(sentences)]
            n += clients
            start = time.perf_counter()
            try:
                r = await http.post(f"{url}/translate", json={"text": text}, timeout=60)
            except httpx.HTTPError as e:
                errors[f"{type(e).__name__}: {e}"[:200]] += 1
                continue
            latencies.append(time.perf_counter() - start)
            if r.status_code != 200:
                errors[f"{r.status_code}: {r.text}"[:200]] += 1
            elif r.json()["translations"][0]["text"] != expected[text]:
                wrong += 1

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(limits=limits) as http:
        await asyncio.gather(*(client(i, http) for i in range(clients)))
    latencies.sort()
    n = len(latencies)
    return {
        "requests": n,
        "errors": errors.total(),
        "error_kinds": dict(errors),
        "wrong": wrong,
        "seconds": seconds,
        "requests_per_s": round(n / seconds, 1),
        "p50_ms": round(1000 * latencies[n // 2], 1) if n else None,
        "p99_ms": round(1000 * latencies[min(n - 1, int(n * 0.99))], 1) if n else None,
        "max_ms": round(1000 * latencies[-1], 1) if n else None,
    }
