"""What one update reports: its loss sums and stop flags, summed over processes in one all-reduce,
and the running totals the train log line averages over."""

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
