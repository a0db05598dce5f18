"""SIGKILL at random moments, one of them inside a checkpoint write, then resume: in bf16, and
with two gloo processes (one of them killed). The final weights and optimizer state equal the
uninterrupted run's bitwise."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aiayn import layout
from tests.conftest import TINY_RUN
from tests.train.test_resume import (
    SLOW_WRITER,
    assert_bitwise_equal,
    assert_checkpoints_whole,
    wait_for,
)

# The command line with checkpoint writing slowed down on request, and each process's pid
# written to PIDS/<rank> (torchrun starts the processes, so the test cannot know them).
PID_LINE = 'Path(os.environ["PIDS"], os.environ.get("RANK", "0")).write_text(str(os.getpid()))\n'
SCRIPT = SLOW_WRITER.replace("write = ck._write_files", PID_LINE + "write = ck._write_files", 1)
TORCHRUN = [
    sys.executable,
    "-m",
    "torch.distributed.run",
    "--standalone",
    "--nproc-per-node",
    "2",
    "--monitor-interval",
    "0.1",
]


class Launcher:
    """Starts `aiayn train` (through SCRIPT) in one process or under torchrun."""

    def __init__(self, tmp: Path, processes: int) -> None:
        self.script, self.pids, self.marker = tmp / "script.py", tmp / "pids", tmp / "writing"
        self.script.write_text(SCRIPT)
        self.pids.mkdir()
        self.processes = processes

    def start(self, args: list[str], pause: float = 0.0) -> subprocess.Popen:
        for path in (self.marker, *self.pids.iterdir()):
            path.unlink(missing_ok=True)
        env = {
            **os.environ,
            "MARKER": str(self.marker),
            "PAUSE": str(pause),
            "PIDS": str(self.pids),
            "OMP_NUM_THREADS": "1",
        }
        head = TORCHRUN if self.processes > 1 else [sys.executable]
        return subprocess.Popen(
            [*head, str(self.script), *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def pid(self, rank: int) -> int:
        wait_for(lambda: (self.pids / str(rank)).is_file(), 900)
        return int((self.pids / str(rank)).read_text())


def kill_three_times_and_resume(tmp: Path, launcher: Launcher, args: list[str], steps: int):
    reference = launcher.start([*args, "--out", str(tmp / "ref")])
    assert reference.wait(1800) == 0, reference.stderr.read().decode()
    run, rng, kills = tmp / "killed", random.Random(7), 0
    for attempt in range(8):
        if kills == 3:
            break
        in_write = kills == 1  # this time, kill the writer while a checkpoint is being written
        proc = launcher.start([*args, "--out", str(run), "--resume"], 5.0 if in_write else 0.0)
        if in_write:
            wait_for(launcher.marker.exists, 900)
            assert Path(launcher.marker.read_text()).name.startswith(".tmp-")  # not yet in place
            victim = launcher.pid(0)
        else:
            done = len(layout.list_checkpoints(run))
            wait_for(
                lambda p=proc, d=done: (
                    p.poll() is not None or len(layout.list_checkpoints(run)) > d
                ),
                900,
            )
            time.sleep(rng.uniform(0.0, 0.1))
            victim = launcher.pid(attempt % launcher.processes)  # under torchrun: either rank
        if proc.poll() is None:
            os.kill(victim, signal.SIGKILL)
            kills += 1
        proc.wait(900)  # torchrun stops the other process when one dies
        assert_checkpoints_whole(run)
    final = launcher.start([*args, "--out", str(run), "--resume"])
    assert final.wait(1800) == 0, final.stderr.read().decode()
    assert kills == 3
    assert not list((run / "checkpoints").glob(".tmp-*"))
    assert_bitwise_equal(tmp / "ref", run, steps)


def test_sigkill_in_bf16_loses_nothing(tiny_data, tmp_path):
    args = [
        "train",
        "--data",
        str(tiny_data),
        *TINY_RUN,
        "save_every=1",
        "--precision",
        "bf16",
        "--max-steps",
        "30",
    ]
    kill_three_times_and_resume(tmp_path, Launcher(tmp_path, 1), args, 30)


@pytest.mark.cpu  # gloo on the CPU, whatever the test device
def test_sigkill_of_one_of_two_gloo_processes_loses_nothing(tiny_data, tmp_path):
    args = ["train", "--data", str(tiny_data), "--device", "cpu", *TINY_RUN, "save_every=1"]
    args += ["--max-steps", "16"]
    kill_three_times_and_resume(tmp_path, Launcher(tmp_path, 2), args, 16)
