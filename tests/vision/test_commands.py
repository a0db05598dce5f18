"""`aiayn vision ...` end to end on tiny models: train, resume, evaluate, sample, predict."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from aiayn.cli import main
from aiayn.layout import latest

TINY = [
    "--no-progress",
    "--threads",
    "1",
    "--set",
    "batch_size=4",
    "valid_size=8",
    "eval_every=0",
    "save_every=2",
    "log_every=1",
    "warmup=2",
]


def train(out, task, steps, *extra):
    args = ["vision", "train", "--out", str(out), "--task", task, "--preset", f"tiny-{task}"]
    return main([*args, *TINY, f"max_steps={steps}", *extra])


def weights(run):
    return load_file(str(latest(run).path / "model.safetensors"))


def test_classify_resumes_exactly(tmp_path, capsys):
    assert train(tmp_path / "straight", "classify", 4) == 0
    assert train(tmp_path / "split", "classify", 2) == 0
    assert (
        main(
            ["vision", "train", "--out", str(tmp_path / "split"), "--resume", *TINY, "max_steps=4"]
        )
        == 0
    )
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "split")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    steps = [json.loads(x)["step"] for x in (tmp_path / "split/metrics.jsonl").open()]
    assert steps == sorted(steps) and steps.count(3) == 1  # logged once, not again on resume
    capsys.readouterr()
    assert main(["vision", "evaluate", "--model", str(tmp_path / "split")]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["images"] == 359 and 0 <= scores["accuracy"] <= 1


@pytest.mark.parametrize("task", ["detect", "segment"])
def test_scene_task_trains_evaluates_and_predicts(tmp_path, capsys, task):
    run = tmp_path / "run"
    assert train(run, task, 2) == 0
    assert main(["vision", "train", "--out", str(run), "--resume", *TINY, "max_steps=3"]) == 0
    assert latest(run).step == 3
    capsys.readouterr()
    picture = tmp_path / "examples.png"
    args = ["--model", str(run), "--count", "8", "--picture", str(picture)]
    assert main(["vision", "evaluate", *args]) == 0
    scores = json.loads(capsys.readouterr().out)
    key = "map_50" if task == "detect" else "mean_iou"
    assert scores["images"] == 8 and 0 <= scores[key] <= 1
    assert picture.stat().st_size > 1000
    scene = tmp_path / "scene.png"
    assert main(["vision", "sample", "--task", task, "--index", "3", "--out", str(scene)]) == 0
    drawn = tmp_path / "drawn.png"
    capsys.readouterr()
    assert (
        main(
            [
                "vision",
                "predict",
                str(scene),
                "--model",
                str(run),
                "--out",
                str(drawn),
                "--threshold",
                "0",
            ]
        )
        == 0
    )
    said = json.loads(capsys.readouterr().out)
    assert drawn.stat().st_size > 1000 and said["out"] == str(drawn)
    if task == "detect":  # threshold 0: every query is drawn
        assert len(said["objects"]) == 8


def test_predict_classifies_a_sampled_digit(tmp_path, capsys):
    assert train(tmp_path / "run", "classify", 1) == 0
    digit = tmp_path / "digit.png"
    assert (
        main(["vision", "sample", "--task", "classify", "--index", "0", "--out", str(digit)]) == 0
    )
    capsys.readouterr()
    assert main(["vision", "predict", str(digit), "--model", str(tmp_path / "run")]) == 0
    assert json.loads(capsys.readouterr().out)["class"] in range(10)


def test_bad_input_is_named(tmp_path, capsys):
    assert train(tmp_path / "run", "classify", 1) == 0
    not_image = tmp_path / "notes.png"
    not_image.write_text("hello")
    assert main(["vision", "predict", str(not_image), "--model", str(tmp_path / "run")]) == 2
    assert f"{not_image}: not an image" in capsys.readouterr().err
    assert train(tmp_path / "other", "classify", 1, "colour=3") == 2
    assert "--set colour: unknown key" in capsys.readouterr().err
    assert train(tmp_path / "run", "classify", 1) == 2  # a finished run is not overwritten
    assert "add --resume" in capsys.readouterr().err


def test_plot_vit_attention(tmp_path, capsys):
    assert train(tmp_path / "run", "classify", 1) == 0
    out = tmp_path / "attention.png"
    assert (
        main(
            [
                "plot",
                "vit-attention",
                "--model",
                str(tmp_path / "run"),
                "--count",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert out.stat().st_size > 1000
