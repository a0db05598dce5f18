"""`benchmarks/gpu_report.py --device cpu --tiny`: every step of the GPU report runs on tiny
shapes and the report is written, so the command works the day a GPU is lent."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STEPS = ["profile", "matmul", "train_speed", "decode", "multilingual", "fp16", "train_run"]
STEPS += ["tests"]


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
    trainer = steps["train_speed"]["presets"]["trainer"]
    assert set(trainer) == {"Trainer one read per update", "Trainer reads per batch"}
    profiled = steps["profile"]
    now, before = profiled["one read per update"], profiled["reads per batch"]
    assert now["launches_per_update"] > 0 and now["top"] and 0 <= now["idle_fraction"] <= 1
    assert sum(now["shares"].values()) == pytest.approx(1, abs=0.01)
    reads = "aten::_local_scalar_dense"
    assert now["syncs_per_update"][reads] < before["syncs_per_update"][reads]
    graphs = steps["decode"]["cuda_graphs"]
    assert graphs["outputs_equal"] and graphs["eager tokens_per_s"] > 0
    assert not graphs["captured"]  # the CPU runs the static-buffer step uncaptured
    multi = steps["multilingual"]
    assert len(multi["langs"]) == 8 and len(multi["directions"]) == 14
    assert all(0 <= d["distinct"] <= 1 and d["chrf"] >= 0 for d in multi["directions"].values())
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
        [*cmd, "--steps", "matmul,tests", "--budget", "10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads((tmp_path / "gpu-report.json").read_text())
    assert list(report["steps"]) == ["matmul", "tests"] and report["budget"] == 10
    assert all(s["status"].startswith("skipped:") for s in report["steps"].values())
    assert done.returncode == 1 and "| tests | skipped:" in (tmp_path / "gpu-report.md").read_text()
