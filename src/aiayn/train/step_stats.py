"""What one update reports: its loss sums and stop flags, summed over processes in one all-reduce,
and the running totals the train log line averages over.

The sums stay on the device until the update has its gradient norm, and are then read once
(`UpdateSums`): a GPU runs ahead of the host instead of waiting for every batch's loss.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class StopFlags:
    """Reasons to stop or save after an update. Any process may raise one; after the update's
    all-reduce every process sees it, so all of them stop (or save) at the same step."""

    signal: bool = False  # SIGINT/SIGTERM arrived: save and stop
    out_of_time: bool = False  # max_minutes have passed since the run started
    save_due: bool = False  # save_minutes have passed since the last checkpoint


@dataclass(frozen=True)
class StepStats:
    """One update's sums: on one process, or over all of them after `Distributed.all_reduce`
    of `to_tensor()` - every field is a sum, so the element-wise sum is the whole update's."""

    loss_sum: float = 0.0  # label-smoothed loss summed over target tokens (nan: update skipped)
    nll_sum: float = 0.0  # negative log-likelihood summed over target tokens
    tokens: float = 0.0  # target tokens
    non_finite: int = 0  # processes whose loss was inf or nan: then none of them steps
    flags: StopFlags = field(default_factory=StopFlags)

    @property
    def loss(self) -> float:
        """Label-smoothed loss per target token (nan for a skipped update)."""
        return self.loss_sum / self.tokens

    def to_tensor(self) -> torch.Tensor:
        """(7,) float64, on the CPU: what the all-reduce sums."""
        f = self.flags
        values = [self.loss_sum, self.nll_sum, self.tokens, self.non_finite]
        return torch.tensor([*values, f.signal, f.out_of_time, f.save_due], dtype=torch.float64)

    @classmethod
    def from_tensor(cls, summed: torch.Tensor) -> StepStats:
        """Back from `to_tensor`'s layout; a flag summed over processes is set if any set it."""
        loss_sum, nll_sum, tokens, non_finite, *flags = summed.tolist()
        return cls(loss_sum, nll_sum, tokens, int(non_finite), StopFlags(*map(bool, flags)))


class UpdateSums:
    """One process's summed losses over an update's batches, as device tensors (float64: the
    sums the host used to make of each batch's float32 loss, bit for bit), read with the stop
    flags and the gradient norm's check in one transfer (`read`).

    sync_each_batch: read every batch's losses and the norm on the host at once, as the loop
    did before; only benchmarks/gpu_steps.py sets it (AIAYN_SYNC_EACH_BATCH=1), to measure
    what the single read buys."""

    def __init__(self, sync_each_batch: bool = False) -> None:
        self.sync_each_batch = sync_each_batch
        self.loss: torch.Tensor | None = None  # () float64
        self.nll: torch.Tensor | None = None

    def add(self, loss: torch.Tensor, nll: torch.Tensor) -> None:
        if self.sync_each_batch:
            loss.item(), nll.item()
        loss, nll = loss.detach().double(), nll.detach().double()
        self.loss = loss if self.loss is None else self.loss + loss
        self.nll = nll if self.nll is None else self.nll + nll

    def local(self, tokens: float, flags: StopFlags) -> torch.Tensor:
        """`StepStats.to_tensor` of this process (a non-finite loss counted), on the losses'
        device and made without waiting for it: what the all-reduce sums."""
        assert self.loss is not None and self.nll is not None, "no batch was added"
        f = flags
        host = torch.tensor([tokens, f.signal, f.out_of_time, f.save_due], dtype=torch.float64)
        host = host.to(self.loss.device, non_blocking=True)  # a copy, not a wait
        bad = (~torch.isfinite(self.loss)).double().view(1)
        sums = torch.stack([self.loss, self.nll])  # (2,)
        return torch.cat([sums, host[:1], bad, host[1:]])  # (7,)

    def read(self, summed: torch.Tensor, norm: torch.Tensor) -> tuple[StepStats, bool]:
        """The update's statistics (`local`, summed over processes) and whether its gradient
        norm (the same on every process) is not finite: one transfer, the update's one wait
        for a GPU (under DDP the all-reduce has already waited)."""
        if self.sync_each_batch:
            bool(torch.isfinite(norm))
        bad_norm = (~torch.isfinite(norm)).double().view(1)
        values = torch.cat([summed.to(bad_norm.device), bad_norm]).cpu()
        return StepStats.from_tensor(values[:7]), bool(values[7])


@dataclass
class RunningTotals:
    """The updates since the last train log line: their sums and the training time they took."""

    loss_sum: float = 0.0
    nll_sum: float = 0.0
    tokens: float = 0.0
    started: float = field(default_factory=time.monotonic)  # moved on by time spent validating

    def add(self, stats: StepStats) -> None:
        self.loss_sum += stats.loss_sum
        self.nll_sum += stats.nll_sum
        self.tokens += stats.tokens

    def tokens_per_s(self) -> float:
        return self.tokens / max(time.monotonic() - self.started, 1e-9)

    def postfix(self, loss: float, lr: float) -> dict[str, str]:
        """The progress bar's figures: the last update's loss, the learning rate, the speed."""
        return {"loss": f"{loss:.3f}", "lr": f"{lr:.2e}", "tok/s": f"{self.tokens_per_s():,.0f}"}
