"""Nothing lost: a resumed run ends bitwise where an uninterrupted one does, even after
SIGKILLs at random moments (one of them in the middle of writing a checkpoint)."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from aiayn import Transformer, layout
from aiayn.cli import main
from aiayn.train import checkpoint as ckpt
from aiayn.train.metrics import read_metrics
from tests.conftest import TINY_RUN


def final_state(run: Path, step: int) -> tuple[dict, dict]:
    path = layout.step_dir(run, step)
    return load_file(str(path / "model.safetensors")), ckpt.read_optimizer(path)


def assert_bitwise_equal(a: Path, b: Path, step: int) -> None:
    (wa, oa), (wb, ob) = final_state(a, step), final_state(b, step)
    assert wa.keys() == wb.keys()
    for name in wa:
        assert torch.equal(wa[name], wb[name]), name
    for key, state in oa["state"].items():
        for name, value in state.items():
            assert torch.equal(value, ob["state"][key][name]), (key, name)


def test_resume_continues_exactly(tiny_data, tmp_path):
    full, part = tmp_path / "full", tmp_path / "part"
    base = ["train", "--data", str(tiny_data), *TINY_RUN]
    assert main([*base, "--out", str(full), "--max-steps", "12"]) == 0
    assert main([*base, "--out", str(part), "--max-steps", "5"]) == 0
    assert (
        main(["train", "--out", str(part), "--resume", "--max-steps", "12", "--no-progress"]) == 0
    )
    assert_bitwise_equal(full, part, 12)
    assert ckpt.read_state(layout.step_dir(part, 12))["train_state"]["step"] == 12
    steps = [r["step"] for r in read_metrics(part) if r["kind"] == "train"]
    assert steps == list(range(1, 13))  # nothing logged twice across the resume


def test_a_new_run_refuses_a_directory_with_checkpoints(tiny_data, tmp_path, capsys):
    base = ["train", "--data", str(tiny_data), "--out", str(tmp_path), *TINY_RUN]
    assert main([*base, "--max-steps", "2"]) == 0
    assert main([*base, "--max-steps", "2"]) == 2
    assert "add --resume" in capsys.readouterr().err


# Runs the CLI with checkpoint writing slowed down: it leaves a marker, then sleeps, after the
# files are written and before the directory is renamed into place.
SLOW_WRITER = """
import os, sys, time
from pathlib import Path
import aiayn.train.checkpoint as ck
write = ck._write_files
def slow(directory, *args, **kwargs):
    write(directory, *args, **kwargs)
    Path(os.environ["MARKER"]).write_text(str(directory))
    time.sleep(float(os.environ["PAUSE"]))
ck._write_files = slow
from aiayn.cli import main
sys.exit(main(sys.argv[1:]))
"""


def start(script: Path, args: list[str], marker: Path, pause: float) -> subprocess.Popen:
    env = {**os.environ, "MARKER": str(marker), "PAUSE": str(pause)}
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def assert_checkpoints_whole(run: Path) -> None:
    for found in layout.list_checkpoints(run):
        Transformer.load(found.path)
        ckpt.read_optimizer(found.path)
        assert ckpt.read_state(found.path)["train_state"]["step"] == found.step


def test_sigkill_at_random_moments_loses_nothing(tiny_data, tmp_path):
    script = tmp_path / "slow_writer.py"
    script.write_text(SLOW_WRITER)
    args = ["train", "--data", str(tiny_data), *TINY_RUN, "save_every=1", "--max-steps", "60"]
    marker = tmp_path / "writing"

    reference = start(script, [*args, "--out", str(tmp_path / "ref")], marker, 0.0)
    assert reference.wait(120) == 0, reference.stderr.read().decode()

    run = tmp_path / "killed"
    rng = random.Random(7)
    kills = 0
    for _ in range(8):
        if kills == 3:
            break
        marker.unlink(missing_ok=True)
        in_write = kills == 1  # this time, kill while a checkpoint is being written
        proc = start(script, [*args, "--out", str(run), "--resume"], marker, 5.0 if in_write else 0)
        if in_write:
            wait_for(marker.exists)
            assert Path(marker.read_text()).name.startswith(".tmp-")  # not yet in place
        else:
            done = len(layout.list_checkpoints(run))

            def progressed(proc=proc, done=done) -> bool:
                return proc.poll() is not None or len(layout.list_checkpoints(run)) > done

            wait_for(progressed)
            time.sleep(rng.uniform(0.0, 0.1))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(30)
        assert_checkpoints_whole(run)
    final = start(script, [*args, "--out", str(run), "--resume"], marker, 0.0)
    assert final.wait(120) == 0, final.stderr.read().decode()
    assert kills == 3
    assert not list((run / "checkpoints").glob(".tmp-*"))  # crashed writes cleaned up
    assert_bitwise_equal(tmp_path / "ref", run, 60)


def test_resume_refuses_another_batch_layout(tiny_data, tmp_path, capsys):
    base = ["train", "--data", str(tiny_data), "--out", str(tmp_path), *TINY_RUN]
    assert main([*base, "--max-steps", "2"]) == 0
    assert main(["train", "--out", str(tmp_path), "--resume", "--update-freq", "3"]) == 3
    assert "resume with the same" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path), "--resume", "--max-tokens", "200"]) == 3
    assert (
        "(processes, update_freq, max_tokens, pad_to) = (1, 2, 160, 8)" in capsys.readouterr().err
    )
    assert main(["train", "--out", str(tmp_path), "--resume", "--set", "pad_to=1"]) == 3
    assert "now (1, 2, 160, 1)" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path), "--resume", "--set", "d_ff=32"]) == 2
    assert "keeps its model" in capsys.readouterr().err


def test_a_crash_between_moving_aside_and_renaming_in_is_repaired(tiny_data, tmp_path):
    assert (
        main(
            [
                "train",
                "--data",
                str(tiny_data),
                "--out",
                str(tmp_path),
                *TINY_RUN,
                "--max-steps",
                "2",
            ]
        )
        == 0
    )
    last = layout.latest(tmp_path)
    aside = last.path.with_name(f".old-{last.path.name}-12345")
    last.path.rename(aside)  # as if killed right after moving the old one aside
    ckpt.clean_up(tmp_path, keep_last=5)
    assert layout.latest(tmp_path).step == 2 and not aside.exists()
