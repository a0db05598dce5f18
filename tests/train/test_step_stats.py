"""An update's statistics and stop flags: one tensor for the all-reduce, and back."""

from __future__ import annotations

import math

import pytest
import torch

from aiayn.train import step_stats
from aiayn.train.step_stats import RunningTotals, StepStats, StopFlags


@pytest.mark.parametrize(
    "stats",
    [
        StepStats(),
        StepStats(12.5, 10.25, 7.0, 0, StopFlags(save_due=True)),
        StepStats(math.inf, 3.0, 5.0, 1, StopFlags(signal=True, out_of_time=True)),
    ],
)
def test_stats_come_back_from_their_tensor_unchanged(stats):
    tensor = stats.to_tensor()
    assert tensor.shape == (7,) and tensor.dtype == torch.float64
    assert StepStats.from_tensor(tensor) == stats


def test_the_sum_of_the_tensors_is_the_whole_updates_stats():
    """What the all-reduce does: sums add up, a process with a non-finite loss is counted, and
    a flag raised by any process is raised for all."""
    parts = [
        StepStats(10.0, 8.0, 4.0, 0, StopFlags(out_of_time=True)),
        StepStats(math.nan, math.nan, 6.0, 1, StopFlags(signal=True)),
        StepStats(2.0, 1.5, 1.0, 0, StopFlags(signal=True)),
    ]
    summed = StepStats.from_tensor(sum(p.to_tensor() for p in parts))
    assert math.isnan(summed.loss_sum) and math.isnan(summed.nll_sum)
    assert (summed.tokens, summed.non_finite) == (11.0, 1)
    assert summed.flags == StopFlags(signal=True, out_of_time=True, save_due=False)
    finite = StepStats.from_tensor(parts[0].to_tensor() + parts[2].to_tensor())
    assert (finite.loss_sum, finite.nll_sum, finite.non_finite) == (12.0, 9.5, 0)
    assert finite.loss == 12.0 / 5.0


def test_running_totals_add_the_sums_and_count_tokens_per_second(monkeypatch):
    window = RunningTotals(started=100.0)
    window.add(StepStats(12.0, 9.0, 6.0))
    window.add(StepStats(4.0, 3.0, 2.0))
    assert (window.loss_sum, window.nll_sum, window.tokens) == (16.0, 12.0, 8.0)
    monkeypatch.setattr(step_stats.time, "monotonic", lambda: 104.0)
    assert window.tokens_per_s() == 2.0
