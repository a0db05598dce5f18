"""Elastic and multi-node training on loopback (gloo): torchrun restarts the processes after one
is killed and the run goes on by itself, ending bitwise equal to an uninterrupted one; and two
"nodes" meeting at a c10d rendezvous train as one process accumulating their two batches."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from aiayn import layout
from aiayn.train.metrics import read_metrics
from tests.conftest import TINY_RUN
from tests.train.test_distributed import SETTINGS, files, train_losses
from tests.train.test_resume import assert_bitwise_equal, wait_for
from tests.train.test_resume_faults import SCRIPT

TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--monitor-interval", "0.1"]
LIMIT = 600  # seconds any launch may take on a loaded 2-core machine: never an endless wait


def start(tmp: Path, launcher: list[str], args: list[str]) -> subprocess.Popen:
    """`aiayn train` (through the test script that writes each rank's pid to tmp/pids/RANK)."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "script.py").write_text(SCRIPT)
    (tmp / "pids").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "MARKER": str(tmp / "writing"),
        "PAUSE": "0",
        "PIDS": str(tmp / "pids"),
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.Popen(
        [*launcher, str(tmp / "script.py"), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen) -> str:
    """Wait for a launch (bounded); its stderr. It must have succeeded."""
    try:
        _, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, err
    return err


@pytest.mark.slow
def test_a_killed_process_is_restarted_and_the_run_goes_on_exactly(tiny_data, tmp_path):
    args = ["train", "--data", str(tiny_data), "--device", "cpu", *TINY_RUN, "save_every=1"]
    args += ["--max-steps", "16"]
    two = [*TORCHRUN, "--standalone", "--nproc-per-node", "2"]
    finished(start(tmp_path / "a", [*two], [*args, "--out", str(tmp_path / "ref")]))

    rng = random.Random(11)
    run, victim_rank, after = tmp_path / "elastic", rng.randrange(2), rng.randrange(1, 12)
    proc = start(tmp_path / "b", [*two, "--max-restarts", "1"], [*args, "--out", str(run)])
    wait_for(lambda: proc.poll() is not None or newest_step(run) >= after, LIMIT)  # at random
    assert proc.poll() is None, "the run ended before it could be killed"
    pid = int((tmp_path / "b" / "pids" / str(victim_rank)).read_text())
    os.kill(pid, signal.SIGKILL)
    err = finished(proc)  # no --resume: the restarted processes went on from the checkpoints
    assert "torchrun restart 1: the run goes on by itself" in err and "resumed from" in err
    assert_bitwise_equal(tmp_path / "ref", run, 16)
    steps = [r["step"] for r in read_metrics(run) if r["kind"] == "train"]
    assert steps == list(range(1, 17))  # nothing logged twice


def newest_step(run: Path) -> int:
    found = layout.latest(run)
    return found.step if found else 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_nodes_on_loopback_match_one_process_accumulating_two_batches(tiny_data, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    common = ["train", "--data", str(tiny_data), *SETTINGS]
    finished(
        start(
            tmp_path / "one-node",
            [sys.executable],
            [*common, "--out", str(one), "--update-freq", "2"],
        )
    )
    port = free_port()
    nodes = [
        start(
            tmp_path / f"node{rank}",
            [
                *TORCHRUN,
                "--nnodes",
                "2",
                "--nproc-per-node",
                "1",
                "--node-rank",
                str(rank),
                "--rdzv-backend",
                "c10d",
                "--rdzv-endpoint",
                f"127.0.0.1:{port}",
                "--rdzv-id",
                "aiayn-test",
            ],
            [*common, "--out", str(two), "--update-freq", "1"],
        )
        for rank in (0, 1)
    ]
    for node in nodes:
        finished(node)
    a, b = train_losses(one), train_losses(two)
    assert len(a) == len(b) == 8
    assert b == pytest.approx(a, rel=1e-5)  # the same batches; only the order of sums differs
    assert files(two) == files(one)  # only the first node's rank 0 wrote
