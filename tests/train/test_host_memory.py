"""The heap trim that keeps a training process's memory bounded."""

import ctypes.util
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
def test_validation_trims_before_each_loss_batch_and_before_decoding(trim, tiny_data, monkeypatch):
    """Validation is a run's memory peak: with trim_heap it returns the free pages before every
    loss batch (batches of new shapes) and before the greedy decoding; without, never."""
    import contextlib

    from aiayn import Transformer, preset
    from aiayn.config import TrainConfig
    from aiayn.data.batching import TokenBatchSampler
    from aiayn.data.dataset import ParallelData
    from aiayn.data.meta import DataDir
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
