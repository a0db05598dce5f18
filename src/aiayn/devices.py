"""The device a command is asked to run on, checked before anything is moved to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


def usable_device(name: str | torch.device) -> torch.device:
    """torch.device(name), or a ValueError that says why this machine cannot use it."""
    try:
        device = torch.device(name)
    except RuntimeError as err:
        raise ValueError(f"--device {name}: {err}; use cpu, cuda or cuda:N") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"--device {name}: this PyTorch ({torch.__version__}) sees no CUDA GPU; use "
                "--device cpu, or a CUDA build of PyTorch on a machine with a GPU"
            )
        gpus = torch.cuda.device_count()
        if device.index is not None and device.index >= gpus:
            raise ValueError(
                f"--device {name}: this machine has {gpus} GPU(s), cuda:0 to cuda:{gpus - 1}"
            )
    return device


@contextmanager
def no_default_device() -> Iterator[None]:
    """Run a block with no default device for new tensors (the CPU), whatever a caller set with
    `torch.set_default_device`, and restore it after: a graph export traced under a GPU default
    device mixes devices and fails on the data-dependent cache write."""
    before = torch.get_default_device()
    torch.set_default_device(None)
    try:
        yield
    finally:
        torch.set_default_device(before)
