"""The heap trim that keeps a training process's memory bounded."""

import ctypes.util
import os
import sys

import pytest

from aiayn.train.host_memory import heap_trimmer


def resident_mb() -> float:
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc are Linux's")
def test_trimming_returns_freed_heap_pages_to_the_os():
    """Many small blocks (served from the heap, not mmapped) are freed but one is kept at the
    end of each run, so the heap cannot shrink by itself; the trim gives the pages back."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    blocks = [libc.malloc(64 * 1024) for _ in range(3000)]  # ~190 MB in 64 KB blocks
    for b in blocks:
        libc.memset(b, 1, 64 * 1024)  # touched: resident
    for b in blocks[:-1]:
        libc.free(b)  # the last block pins the top of the heap
    before = resident_mb()
    heap_trimmer()()
    after = resident_mb()
    libc.free(blocks[-1])
    assert before - after > 100, (before, after)


@pytest.mark.parametrize("trim", [True, False])
def test_validation_trims_before_each_loss_batch_and_before_decoding(
    trim, tiny_data, monkeypatch, on_cpu
):
    """Validation is a run's memory peak: with trim_heap it returns the free pages before every
    loss batch (batches of new shapes) and before the greedy decoding; without, never."""
    import contextlib

    from aiayn import Transformer, preset
    from aiayn.config import TrainConfig
    from aiayn.data.batches.dataset import ParallelData
    from aiayn.data.batches.sampler import TokenBatchSampler
    from aiayn.data.data_dir import DataDir
    from aiayn.train import validate

    calls = []
    real = validate.heap_trimmer
    monkeypatch.setattr(
        validate, "heap_trimmer", lambda on: (lambda: calls.append(1)) if on else real(on)
    )
    cfg = TrainConfig(trim_heap=trim, max_tokens=64, valid_bleu_sentences=4)
    data = ParallelData(tiny_data, "valid")
    batches = TokenBatchSampler(
        data.src_lengths, data.tgt_lengths, 64, shuffle=False, pad_to=cfg.pad_to
    )
    model = Transformer(preset("tiny")).eval()
    validate.validate(model, tiny_data, cfg, contextlib.nullcontext, DataDir(tiny_data).tokenizer)
    expected = len(list(batches.epoch_batches(0))) + 1 if trim else 0
    assert expected != 1 and len(calls) == expected


class ExecCalledError(Exception):
    """Stands in for os.execve, which would replace the test process."""


@pytest.fixture
def restart(monkeypatch):
    """restart_with_tcmalloc with a found, not yet loaded tcmalloc and a recording execve."""
    from aiayn.train import host_memory

    for name in (host_memory.ALLOCATOR_ENV, host_memory._RESTARTED_ENV, "LD_PRELOAD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(host_memory, "tcmalloc_loaded", lambda: False)
    monkeypatch.setattr(host_memory, "find_tcmalloc", lambda: "libtcmalloc_minimal.so.4")
    calls = []

    def execve(path, argv, env):
        calls.append((path, argv, env))
        raise ExecCalledError

    monkeypatch.setattr(host_memory.os, "execve", execve)
    return host_memory, calls


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD is Linux's")
def test_restart_preloads_tcmalloc_and_keeps_the_arguments_and_other_preloads(restart, monkeypatch):
    host_memory, calls = restart
    monkeypatch.setenv("LD_PRELOAD", "libother.so")
    argv = ["python", "-m", "aiayn", "train", "--data", "d"]
    with pytest.raises(ExecCalledError):
        host_memory.restart_with_tcmalloc(argv)
    (path, got_argv, env) = calls[0]
    assert path == sys.executable and got_argv == argv
    assert env["LD_PRELOAD"] == "libother.so libtcmalloc_minimal.so.4"
    assert env[host_memory._RESTARTED_ENV] == "1"  # a restart that fails to load it never loops


@pytest.mark.parametrize("case", ["asked for the system's", "tried once", "already loaded"])
def test_no_restart_when_asked_not_to_or_needless(restart, monkeypatch, case):
    host_memory, calls = restart
    if case == "asked for the system's":
        monkeypatch.setenv(host_memory.ALLOCATOR_ENV, "system")
    elif case == "tried once":
        monkeypatch.setenv(host_memory._RESTARTED_ENV, "1")
    else:
        monkeypatch.setattr(host_memory, "tcmalloc_loaded", lambda: True)
    host_memory.restart_with_tcmalloc(["python", "-m", "aiayn", "train"])
    assert calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD is Linux's")
def test_a_missing_tcmalloc_is_said_with_how_to_install_it(restart, monkeypatch, capsys):
    host_memory, calls = restart
    monkeypatch.setattr(host_memory, "find_tcmalloc", lambda: None)
    host_memory.restart_with_tcmalloc(["python", "-m", "aiayn", "train"])
    assert calls == []
    err = capsys.readouterr().err
    assert "tcmalloc is not installed" in err and "apt-get install libtcmalloc-minimal4" in err


def test_no_heap_trim_under_tcmalloc(monkeypatch):
    from aiayn.train import host_memory

    monkeypatch.setattr(host_memory, "tcmalloc_loaded", lambda: True)

    def no_libc(*args, **kwargs):
        raise AssertionError("glibc's heap is not the one in use: nothing to trim")

    monkeypatch.setattr(host_memory.ctypes, "CDLL", no_libc)
    host_memory.heap_trimmer(True)()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD is Linux's")
def test_the_train_command_runs_on_tcmalloc_where_installed(tiny_data, tmp_path, monkeypatch):
    """As a program, `aiayn train` restarts itself on tcmalloc if the system has it, and says in
    its summary which allocator it ran on; `AIAYN_ALLOCATOR=system` keeps glibc's."""
    import json
    import subprocess

    from aiayn.train.host_memory import ALLOCATOR_ENV, find_tcmalloc
    from tests.conftest import TINY_RUN

    monkeypatch.delenv(ALLOCATOR_ENV, raising=False)
    expected = "tcmalloc" if find_tcmalloc() else "system"
    for setting, want in ((None, expected), ("system", "system")):
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        if setting:
            env[ALLOCATOR_ENV] = setting
        out = tmp_path / (setting or "default")
        args = ["train", "--data", str(tiny_data), "--out", str(out), *TINY_RUN, "--max-steps", "2"]
        done = subprocess.run(
            [sys.executable, "-m", "aiayn", *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["allocator"] == want, done.stderr
