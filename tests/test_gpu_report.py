"""`benchmarks/gpu_report.py --device cpu --tiny`: every step of the GPU report runs on tiny
shapes and the report is written, so the command works the day a GPU is lent."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STEPS = ["tests", "matmul", "train_speed", "fp16", "decode", "train_run"]


@pytest.mark.slow
def test_every_step_of_the_gpu_report_runs_on_tiny_shapes(tmp_path):
    out = tmp_path / "report"
    cmd = [sys.executable, "benchmarks/gpu_report.py", "--device", "cpu", "--tiny"]
    done = subprocess.run(
        [*cmd, "--out", str(out), "--data", str(tmp_path / "none")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads((out / "gpu-report.json").read_text())
    assert list(report["steps"]) == STEPS
    failed = {s: r["status"] for s, r in report["steps"].items() if r["status"] != "ok"}
    assert not failed and done.returncode == 0, failed or done.stderr[-2000:]
    steps = {name: found["result"] for name, found in report["steps"].items()}
    assert steps["matmul"]["tflops"]["bf16"] > 0
    speeds = steps["train_speed"]["presets"]["tiny"]
    assert set(speeds) == {
        "aiayn eager",
        "aiayn torch.compile",
        "torch.nn.Transformer",
        "HF Marian",
    }
    assert all(s["tokens_per_s"] > 0 and s["mfu"] > 0 for s in speeds.values())
    assert steps["fp16"]["ok"] and "lower --max-tokens" in steps["fp16"]["oom_message"]
    assert any(key.startswith("HF generate") for key in steps["decode"]["target_tokens_per_s"])
    assert steps["train_run"]["steps"] == 4 and steps["train_run"]["valid_bleu"]
    table = (out / "gpu-report.md").read_text()
    assert all(f"| {step} | ok |" in table for step in STEPS)
    assert report["machine"]["torch"] and report["machine"]["commit"]


def test_a_device_the_machine_lacks_is_said_before_anything_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, "benchmarks/gpu_report.py", "--device", "cuda:99", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "--device cuda:99" in done.stderr
    assert "--device cpu --tiny" in done.stderr and not (tmp_path / "gpu-report.json").exists()


def test_a_budget_too_short_for_a_step_skips_it_and_says_so(tmp_path):
    cmd = [sys.executable, "benchmarks/gpu_report.py", "--device", "cpu", "--tiny"]
    cmd += ["--out", str(tmp_path), "--data", str(tmp_path / "none")]
    done = subprocess.run(
        [*cmd, "--steps", "matmul", "tests", "--budget", "10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads((tmp_path / "gpu-report.json").read_text())
    assert list(report["steps"]) == ["matmul", "tests"] and report["budget"] == 10
    assert all(s["status"].startswith("skipped:") for s in report["steps"].values())
    assert done.returncode == 1 and "| tests | skipped:" in (tmp_path / "gpu-report.md").read_text()
