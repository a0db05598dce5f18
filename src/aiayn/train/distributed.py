"""One process or many (torchrun): rank, device, and the few collective operations used."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from aiayn.devices import usable_device

T = TypeVar("T")


def restarts() -> int:
    """How many times torchrun has restarted this job's processes (`--max-restarts N`): 0 on
    the first attempt, and when not launched by torchrun."""
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


def attempt_store(rank: int, world_size: int, timeout: timedelta) -> dist.Store:
    """torchrun's key-value store (`env://`), its keys apart for each restart. torchrun keeps
    one store across restarts: without the prefix, a restarted process could read the address
    a killed one left there and fail to connect to it (seen in tests/train/test_elastic.py)."""
    store, _, _ = next(dist.rendezvous("env://", rank, world_size, timeout=timeout))
    store.set_timeout(timeout)
    return dist.PrefixStore(f"aiayn-attempt-{restarts()}", store)


@dataclass(frozen=True)
class Distributed:
    """Where this process stands: rank 0 of 1 when not launched by torchrun."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def from_env(cls, device: str | None = None) -> Distributed:
        """Read torchrun's variables; start the process group (gloo on CPU, nccl on CUDA)."""
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dev = usable_device(device)
        try:
            if dev.type == "cuda":
                if world_size > 1 or dev.index is None:
                    dev = torch.device("cuda", local_rank)
                gpus = torch.cuda.device_count()
                if dev.index >= gpus:
                    raise ValueError(
                        f"--device {device}: this process (local rank {local_rank}) needs "
                        f"cuda:{dev.index}, but this machine has {gpus} GPU(s); start at most "
                        f"{gpus} per node (torchrun --nproc-per-node {gpus}), or train on the "
                        "CPU with --device cpu"
                    )
                torch.cuda.set_device(dev)
        except (RuntimeError, AssertionError) as err:
            raise ValueError(f"--device {device}: not usable here ({err})") from None
        if world_size > 1 and not dist.is_initialized():
            # Other processes wait while the main one validates or saves: allow it time.
            timeout = timedelta(hours=2)
            dist.init_process_group(
                "nccl" if dev.type == "cuda" else "gloo",
                store=attempt_store(rank, world_size, timeout),
                rank=rank,
                world_size=world_size,
                timeout=timeout,
            )
        return cls(rank, world_size, dev)

    def all_reduce(self, values: torch.Tensor) -> torch.Tensor:
        """Element-wise sum over all processes, in one all-reduce (identity for one process)."""
        if not self.enabled:
            return values
        summed = values.to(self.device)  # nccl reduces CUDA tensors only
        dist.all_reduce(summed)
        return summed.cpu()

    def sum(self, values: list[float]) -> list[float]:
        """Element-wise sum of a few numbers over all processes (identity for one process)."""
        if not self.enabled:
            return values
        return self.all_reduce(torch.tensor(values, dtype=torch.float64)).tolist()

    def gather(self, obj: T) -> list[T]:
        """Every process's object, in rank order (on every process)."""
        if not self.enabled:
            return [obj]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def close(self) -> None:
        if self.enabled and dist.is_initialized():
            dist.destroy_process_group()
