"""A soak: 64 loopback clients against a real `aiayn serve` for 10 minutes, valid and invalid
requests mixed; every answer checked, the server's resident memory sampled.

    .venv/bin/python benchmarks/soak.py --model runs/demo [--clients 64] [--minutes 10]
        [--data data/en-de] [--out soak.json]

The server runs with API keys and a rate limit (high enough never to refuse a valid request:
the limiter's own bookkeeping is under test) and its default budget. Each client picks, per
request:

- valid (70%): 1-4 validation sentences drawn at random, with the key. The answer must hold,
  in order, each sentence's translation requested alone beforehand: a request whose texts were
  mixed up with another's would show (the drawn combinations act as markers).
- invalid (30%), each answer's status checked: no key or a wrong one (401), an unknown field,
  nbest > beam, malformed JSON, a body not in UTF-8, a lone surrogate (422), a text over the
  character limit or a body over the size cap (413).
- degenerate (1 in 500): one character 1000 times, answered within its budget (200, or 422
  past the time budget).

Reported: requests by kind and status, server errors (5xx, no answer in 120 s, a dropped
connection), answers that differ from the solo translation, wrong statuses, throughput, p50
and p99 of valid requests, and the server's resident memory per minute (pass: the last
minute's mean within 10% of the second minute's).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from aiayn.data.data_dir import DataDir
from harness.live import live_server
from harness.machine import cpu_model

INVALID = {  # name: (body bytes, headers beyond the key, expected status)
    "unknown field": (b'{"text": "The dog.", "beem": 4}', {}, 422),
    "nbest > beam": (b'{"text": "The dog.", "beam": 2, "nbest": 3}', {}, 422),
    "malformed JSON": (b'{"text": "The dog.', {}, 422),
    "not UTF-8": ('{"text": "Der Schl\xfcssel."}'.encode("latin-1"), {}, 422),
    "lone surrogate": (b'{"text": "The dog\\ud800."}', {}, 422),
    "text too long": (json.dumps({"text": "word " * 300}).encode(), {}, 413),
    "body too large": (b'{"text": "' + b"x" * 600_000 + b'"}', {}, 413),
}


def server_pid(port: int) -> int:
    """The pid of the `aiayn serve` listening on `port` (found by its command line)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in argv and str(port).encode() in argv:
                return int(entry.name)
    raise RuntimeError(f"no aiayn serve on port {port}")


def rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(s for s in status.splitlines() if s.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


class Tally:
    def __init__(self) -> None:
        self.statuses: collections.Counter = collections.Counter()  # (kind, status)
        self.server_errors: list[str] = []
        self.wrong_answers = 0
        self.wrong_status: list[str] = []
        self.latencies: list[float] = []


async def client(
    i: int, http: httpx.AsyncClient, url: str, key: str, solo: dict[str, str], stop: float, t: Tally
) -> None:
    rng = random.Random(i)
    sentences = list(solo)
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    while time.monotonic() < stop:
        roll = rng.random()
        texts: list[str] = []
        if rng.randrange(500) == 0:
            kind, body, headers, expected = (
                "degenerate",
                b'{"text": "' + b"a" * 1000 + b'"}',
                auth,
                (200, 422),
            )
        elif roll < 0.7:
            texts = rng.sample(sentences, rng.randint(1, 4))
            kind, body, headers, expected = (
                "valid",
                json.dumps({"text": texts}).encode(),
                auth,
                (200,),
            )
        elif roll < 0.75:
            kind, body, headers, expected = (
                "no key",
                b'{"text": "The dog."}',
                {"Content-Type": "application/json"},
                (401,),
            )
        elif roll < 0.8:
            wrong = {**auth, "Authorization": f"Bearer {key[:-1]}x"}
            kind, body, headers, expected = "wrong key", b'{"text": "The dog."}', wrong, (401,)
        else:
            kind = rng.choice(list(INVALID))
            body, extra, status = INVALID[kind]
            headers, expected = {**auth, **extra}, (status,)
        start = time.perf_counter()
        try:
            r = await http.post(f"{url}/translate", content=body, headers=headers, timeout=120)
        except httpx.HTTPError as err:
            t.server_errors.append(f"{kind}: {type(err).__name__} {err}")
            continue
        t.statuses[(kind, r.status_code)] += 1
        if r.status_code >= 500:
            t.server_errors.append(f"{kind}: {r.status_code} {r.text[:200]}")
        elif r.status_code not in expected:
            t.wrong_status.append(f"{kind}: {r.status_code} {r.text[:200]}")
        elif kind == "valid":
            t.latencies.append(time.perf_counter() - start)
            got = [item["text"] for item in r.json()["translations"]]
            t.wrong_answers += got != [solo[s] for s in texts]


async def watch_memory(pid: int, stop: float, samples: list[tuple[float, float]]) -> None:
    begin = time.monotonic()
    while time.monotonic() < stop:
        samples.append((time.monotonic() - begin, rss_mib(pid)))
        await asyncio.sleep(5)


def per_minute(samples: list[tuple[float, float]]) -> list[float]:
    minutes: dict[int, list[float]] = collections.defaultdict(list)
    for seconds, mib in samples:
        minutes[int(seconds // 60)].append(mib)
    return [round(statistics.mean(minutes[m]), 1) for m in sorted(minutes)]


async def soak(
    url: str, pid: int, key: str, solo: dict[str, str], clients: int, seconds: float
) -> dict:
    assert url.startswith("http://127.0.0.1:"), "load tests target loopback only"
    tally, samples = Tally(), []
    stop = time.monotonic() + seconds
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=clients)) as http:
        await asyncio.gather(
            watch_memory(pid, stop, samples),
            *(client(i, http, url, key, solo, stop, tally) for i in range(clients)),
        )
    rss = per_minute(samples)
    lat = sorted(tally.latencies)
    by_kind: dict[str, dict[int, int]] = collections.defaultdict(dict)
    for (kind, status), n in sorted(tally.statuses.items()):
        by_kind[kind][status] = n
    requests = sum(tally.statuses.values()) + len(tally.server_errors)
    flat = len(rss) >= 3 and abs(rss[-1] - rss[1]) <= 0.10 * rss[1]
    return {
        "requests": requests,
        "requests_per_s": round(requests / seconds, 1),
        "by_kind": by_kind,
        "server_errors": len(tally.server_errors),
        "server_error_examples": tally.server_errors[:5],
        "wrong_answers": tally.wrong_answers,
        "wrong_status": len(tally.wrong_status),
        "wrong_status_examples": tally.wrong_status[:5],
        "valid_p50_ms": round(1000 * lat[len(lat) // 2]) if lat else None,
        "valid_p99_ms": round(1000 * lat[int(len(lat) * 0.99)]) if lat else None,
        "rss_mib_per_minute": rss,
        "rss_flat": flat,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    key = secrets.token_urlsafe(32)
    sentences = DataDir(args.data).sources("valid")[: args.sentences]
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        keys.write_text(key + "\n")
        extra = ["--api-keys", str(keys), "--rate-limit", "1000000/minute"]
        with live_server(args.model, *extra) as url:
            pid = server_pid(int(url.rsplit(":", 1)[1]))
            auth = {"Authorization": f"Bearer {key}"}
            solo = {
                s: httpx.post(
                    f"{url}/translate", json={"text": s}, headers=auth, timeout=120
                ).json()["translations"][0]["text"]
                for s in sentences
            }
            result = asyncio.run(soak(url, pid, key, solo, args.clients, 60 * args.minutes))
    result = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "clients": args.clients,
        "minutes": args.minutes,
        **result,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    ok = result["server_errors"] == 0 and result["wrong_answers"] == 0 and result["rss_flat"]
    sys.exit(0 if ok and result["wrong_status"] == 0 else 1)


if __name__ == "__main__":
    main()
