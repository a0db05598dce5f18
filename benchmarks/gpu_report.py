"""One command that proves aiayn on a GPU: every check and measurement, one report.

    python benchmarks/gpu_report.py                      # on a CUDA machine (make gpu-report)
    python benchmarks/gpu_report.py --device cpu --tiny  # every step on tiny shapes, < 1 min

Steps (benchmarks/gpu_steps.py), each in its own child process with its own time limit, so
that a failure or a hang is reported and the others still run; the new ones first:
- profile (gpu_profile.py): torch.profiler over a few `base` bf16 updates of aiayn's Trainer:
  kernel launches, top kernels, matrix products' share, host syncs, idle fraction per update;
- multilingual (gpu_multilingual.py): a model of 8 languages trained for minutes, chrF, BLEU,
  off-target rate and distinct outputs per direction;
1. tests: the fp16 tests, then the CUDA test suite (AIAYN_TEST_DEVICE) - model, nn, decoding,
   training - whose tests run fp32 and bf16 autocast; not those marked `cpu` (gloo processes);
2. matmul: the card's measured bf16 and fp16 matrix-product rate (the peak for MFU);
3. train_speed: the `base` preset (37,000-piece vocabulary) on batches of ~25,000 target
   tokens with the Bible's real lengths, bf16: target tokens/s and MFU for aiayn eager, aiayn
   under torch.compile, torch.nn.Transformer and Hugging Face MarianMTModel of the same size,
   interleaved, medians; then `big` for aiayn alone;
4. fp16: through aiayn's Trainer, an overflowing update is skipped and training goes on; a
   CUDA out-of-memory error gives our message;
5. decode: beam 4 at batch 1 and 64, aiayn fp32/bf16/fp16 against Hugging Face `generate` on
   the same weights;
6. train_run: `aiayn train` (small preset, short recipe, 600 updates) on the Bible with
   validation BLEU.
It prepares the Bible (`aiayn prepare`) when --data holds no prepared corpus, and writes
OUT/gpu-report.json and OUT/gpu-report.md (a table for benchmarks/README.md) with the GPU's
name, driver, torch version and commit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("profile", "matmul", "train_speed", "decode", "multilingual", "fp16", "train_run", "tests")
# seconds each on a GPU (--tiny: 120, the multilingual step 240). A 15-minute loan, start-up
# included, holds `--budget 530 --steps profile train_speed decode multilingual` (docs/gpu.md).
LIMITS = {"profile": 90, "matmul": 60, "train_speed": 240, "decode": 150, "multilingual": 240}
LIMITS |= {"fp16": 120, "train_run": 480, "tests": 480}
SHORTEST = 30  # seconds: under --budget, a step that would get less is skipped, not started


def machine(device: str) -> dict:
    """What ran the report: GPU name and driver (nvidia-smi), torch, the commit, the date."""
    import torch

    info = {
        "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "device": device,
        "commit": git("describe", "--always", "--dirty"),
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        try:
            info["driver"] = subprocess.run(query, capture_output=True, text=True).stdout.strip()
        except OSError:
            info["driver"] = "unknown (no nvidia-smi)"
    else:
        info["cpu"] = cpu_name()
    return info


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def cpu_name() -> str:
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def prepared(data: Path, tiny: bool, work: Path) -> Path:
    """A prepared corpus: with --tiny, a synthetic one of word pairs made in `work`; else
    `data` if it holds one, or the Bible prepared there."""
    cmd = [sys.executable, "-m", "aiayn", "prepare", "--no-progress"]
    if tiny:
        data, corpus = work / "data", work / "corpus.tsv"
        words = [f"w{i}x{i * 7 % 13}" for i in range(300)]
        lines = []
        for i in range(600):
            chosen = [words[(i * 37 + k * 11) % 300] for k in range(3 + i % 9)]
            lines.append(" ".join(chosen) + "\t" + " ".join(w.upper() for w in chosen))
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cmd += ["--corpus", str(corpus), "--valid-size", "30", "--test-size", "30"]
        cmd += ["--vocab-size", "64"]
    elif (data / "meta.json").is_file():
        return data
    done = subprocess.run([*cmd, "--out", str(data)], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"aiayn prepare failed: {done.stderr.strip()[-1000:]}")
    return data


def step_limit(step: str, a: argparse.Namespace, left: float | None) -> int:
    """Seconds the step may run: its own limit, cut to what is left of --budget."""
    limit = (240 if step == "multilingual" else 120) if a.tiny else LIMITS[step]
    return limit if left is None else int(min(limit, left))


def run_step(step: str, a: argparse.Namespace, data: Path, limit: int) -> dict:
    """One step in its own child process, within its time limit: its result, or what went
    wrong (the exit code and the end of its error output, or the time it ran out). A step
    that runs out is killed with the processes it started (pytest, aiayn train), so that none
    of them goes on using the GPU under the next step; what it had saved is kept."""
    out = a.out / f"{step}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(ROOT / "benchmarks" / "gpu_steps.py"), step, "--device", a.device]
    cmd += ["--data", str(data), "--work", str(a.out / "work"), "--json", str(out)]
    cmd += ["--multi", str(a.multi)]
    cmd += ["--repeats", "2" if a.tiny else "5"] + (["--tiny"] if a.tiny else [])
    started = time.monotonic()
    child = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        found = {"status": f"timed out after {limit} s", "seconds": limit}
        log = a.out / "work" / f"{step}.log"
        if log.is_file():  # where it was when it ran out
            found["log_tail"] = log.read_text(encoding="utf-8").strip().splitlines()[-5:]
        if out.is_file():  # what the step saved before it ran out
            found["result"] = json.loads(out.read_text())
            found["status"] += " (partial result)"
        return found
    seconds = round(time.monotonic() - started, 1)
    if child.returncode or not out.is_file():
        tail = stderr.strip().splitlines()[-3:]
        found = {"status": f"failed (exit {child.returncode}): {' | '.join(tail)}"}
        if out.is_file():  # what the step saved before it failed (the suites that ran)
            found["result"] = json.loads(out.read_text())
        return found | {"seconds": seconds}
    return {"status": "ok", "seconds": seconds, "result": json.loads(out.read_text())}


def markdown(report: dict) -> str:
    """A table per step, to paste into benchmarks/README.md."""
    m = report["machine"]
    where = m.get("gpu", m.get("cpu", "?")) + (f", driver {m['driver']}" if "driver" in m else "")
    lines = [f"{m['date']}, {where}, torch {m['torch']}, commit {m['commit']}", ""]
    lines += ["| step | status | seconds | result |", "|---|---|---|---|"]
    for step, found in report["steps"].items():
        result = json.dumps(found.get("result", ""), separators=(", ", ": "))
        lines.append(f"| {step} | {found['status']} | {found['seconds']} | `{result}` |")
    return "\n".join(lines) + "\n"


def save(report: dict, out: Path) -> None:
    write(out / "gpu-report.json", json.dumps(report, indent=2) + "\n")
    write(out / "gpu-report.md", markdown(report))


def write(path: Path, text: str) -> None:
    """Written whole or not at all."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:1, ... or cpu")
    parser.add_argument("--tiny", action="store_true", help="tiny shapes: checks the command")
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "en-de")
    parser.add_argument(
        "--multi",
        type=Path,
        default=ROOT / "data" / "multi8",
        help="the multilingual step's prepared directory (--tiny: a synthetic one is made)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "gpu-report")
    parser.add_argument(
        "--steps",
        nargs="+",
        type=lambda x: x.split(","),
        default=[list(STEPS)],
        help=f"which, in this order (spaces or commas): {', '.join(STEPS)}",
    )
    parser.add_argument(
        "--budget",
        type=float,
        help="seconds for the whole report (a lent GPU's time): each step's limit is cut to "
        f"what is left; a step with under {SHORTEST} s left is skipped",
    )
    a = parser.parse_args()
    a.steps = [step for group in a.steps for step in group if step]
    unknown = [step for step in a.steps if step not in STEPS]
    if unknown:
        parser.error(f"--steps {','.join(unknown)}: unknown; choose among {', '.join(STEPS)}")
    from aiayn.devices import usable_device

    try:
        usable_device(a.device)
    except ValueError as err:
        sys.exit(f"{err}; check the command itself with --device cpu --tiny")
    started = time.monotonic()
    (a.out / "work").mkdir(parents=True, exist_ok=True)
    data = prepared(a.data, a.tiny, a.out / "work")
    report = {"machine": machine(a.device), "tiny": a.tiny, "budget": a.budget, "steps": {}}
    for step in a.steps:
        left = None if a.budget is None else a.budget - (time.monotonic() - started)
        limit = step_limit(step, a, left)
        if limit < SHORTEST:
            found = {"status": f"skipped: {max(0, round(left or 0))} s left of --budget"}
            report["steps"][step] = found | {"seconds": 0}
        else:
            print(f"{step} (up to {limit} s) ...", file=sys.stderr, flush=True)
            report["steps"][step] = found = run_step(step, a, data, limit)
        print(f"{step}: {found['status']}", file=sys.stderr, flush=True)
        save(report, a.out)  # after every step: a report cut short keeps what it had
    print(markdown(report))
    return int(any(s["status"] != "ok" for s in report["steps"].values()))


if __name__ == "__main__":
    sys.exit(main())
