"""`aiayn train` as a user meets it: settings, stopping rules, faults, signals, averaging."""

import json
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

import aiayn.train.trainer as trainer_module
from aiayn import layout
from aiayn.cli import main
from aiayn.train.metrics import read_metrics
from tests.conftest import TINY_RUN


def summary(run) -> dict:
    return next(r for r in read_metrics(run) if r["kind"] == "summary")


def test_unknown_settings_are_rejected_with_the_valid_ones(tiny_data, tmp_path, capsys):
    code = main(["train", "--data", str(tiny_data), "--out", str(tmp_path), "--set", "warmpu=3"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--set warmpu: unknown key" in err and "warmup" in err and "d_model" in err
    assert (
        main(["train", "--data", str(tiny_data), "--out", str(tmp_path), "--set", "warmup=x"]) == 2
    )
    assert "expected a int" in capsys.readouterr().err


def test_patience_stops_a_run_that_no_longer_improves(tiny_data, tmp_path):
    args = [
        "train",
        "--data",
        str(tiny_data),
        "--out",
        str(tmp_path),
        *TINY_RUN,
        "valid_every=2",
        "patience=2",
        "--max-steps",
        "50",
    ]
    assert main(args) == 0
    s = summary(tmp_path)
    valid = [r for r in read_metrics(tmp_path) if r["kind"] == "valid"]
    assert s["stopped_by"] == "patience" and s["steps"] < 50
    assert all(r["bleu"] <= valid[0]["bleu"] for r in valid[1:])  # never better than the first
    assert (tmp_path / "checkpoints" / "best" / "model.safetensors").is_file()
    assert {"loss", "ppl", "bleu", "chrf", "bleu_signature"} <= valid[0].keys()


def test_max_epochs(tiny_data, tmp_path):
    assert (
        main(
            [
                "train",
                "--data",
                str(tiny_data),
                "--out",
                str(tmp_path),
                *TINY_RUN,
                "--max-epochs",
                "1",
            ]
        )
        == 0
    )
    s = summary(tmp_path)
    assert s["stopped_by"] == "max_epochs" and s["epochs"] == 1


def test_non_finite_losses_are_skipped_then_stop_the_run(tiny_data, tmp_path, monkeypatch, capsys):
    real = trainer_module.projected_smoothed_loss
    calls = {"n": 0}

    def sometimes_nan(*args):
        calls["n"] += 1
        loss, nll = real(*args)
        # updates of 2 batches: update 3 is poisoned once, from update 6 on always
        if calls["n"] in (5, 6) or calls["n"] > 10:
            return loss * float("nan"), nll
        return loss, nll

    monkeypatch.setattr(trainer_module, "projected_smoothed_loss", sometimes_nan)
    args = [
        "train",
        "--data",
        str(tiny_data),
        "--out",
        str(tmp_path),
        *TINY_RUN,
        "save_every=1",
        "max_bad_steps=3",
        "--max-steps",
        "20",
    ]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "non-finite loss, update skipped (1 in a row)" in err
    assert "3 updates in a row had a non-finite loss; stopping" in err
    assert layout.latest(tmp_path).step == 4  # 5 updates ran, one skipped: steps 1-4 saved
    # Step 4's weights gave only non-finite losses; step 3's gave a finite one (logged at 4).
    good = layout.step_dir(tmp_path, 3)
    assert f"The last good checkpoint is {good}: the training loss of its weights" in err
    weights = load_file(str(good / "model.safetensors"))
    assert all(torch.isfinite(w).all() for w in weights.values())


def test_sigterm_saves_and_the_run_resumes(tiny_data, tmp_path):
    args = [
        sys.executable,
        "-m",
        "aiayn",
        "train",
        "--data",
        str(tiny_data),
        "--out",
        str(tmp_path),
        *TINY_RUN,
        "save_every=5",
        "--max-steps",
        "100000",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while layout.latest(tmp_path) is None:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    result = json.loads(out)
    assert result["stopped_by"] == "signal"
    stopped_at = result["steps"]
    assert layout.latest(tmp_path).step == stopped_at  # saved where it stopped
    assert (
        main(
            [
                "train",
                "--out",
                str(tmp_path),
                "--resume",
                "--no-progress",
                "--max-steps",
                str(stopped_at + 3),
            ]
        )
        == 0
    )
    assert layout.latest(tmp_path).step == stopped_at + 3


def test_average_is_the_mean_of_the_last_checkpoints(tiny_data, tmp_path, capsys):
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--data",
                str(tiny_data),
                "--out",
                str(run),
                *TINY_RUN,
                "save_every=1",
                "keep_last=3",
                "--max-steps",
                "4",
            ]
        )
        == 0
    )
    kept = layout.list_checkpoints(run)
    assert [c.step for c in kept] == [2, 3, 4]  # keep_last
    assert main(["average", str(run), "--last", "2", "--out", str(tmp_path / "avg")]) == 0
    assert "averaged 2 checkpoints (steps 3, 4)" in capsys.readouterr().out
    a, b = (load_file(str(c.path / "model.safetensors")) for c in kept[1:])
    avg = load_file(str(tmp_path / "avg" / "model.safetensors"))
    for name in avg:
        torch.testing.assert_close(avg[name], (a[name] + b[name]) / 2)
    assert (tmp_path / "avg" / "spm.model").is_file()


@pytest.mark.parametrize("split", ["test"])
def test_translate_and_evaluate_from_the_command_line(tiny_run, tiny_data, tmp_path, capsys, split):
    run = tiny_run
    assert main(["evaluate", "--model", str(run), "--data", str(tiny_data), "--split", split]) == 0
    out = capsys.readouterr().out
    assert "BLEU" in out and "nrefs:1" in out and "chrF" in out
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\n\nThe old man reads.\n")
    assert (
        main(
            [
                "translate",
                "--model",
                str(run),
                "--input",
                str(src),
                "--output",
                str(tmp_path / "out.txt"),
            ]
        )
        == 0
    )
    lines = (tmp_path / "out.txt").read_text().split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""  # 3 lines, the empty one kept
    src.write_bytes(b"fine\n\xff\xfe bad\n")
    assert main(["translate", "--model", str(run), "--input", str(src)]) == 2
    assert "in.txt, line 2: not valid UTF-8" in capsys.readouterr().err
